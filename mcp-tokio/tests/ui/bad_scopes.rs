use mcp_sansio_tokio::{prompt, resource, tool};

/// Empties the cache
#[tool(scopes = "mcp:admin")]
async fn wipe() -> String {
    "wiped".into()
}

/// Asks for a review
#[prompt(scopes = ["prompts:read", 1])]
fn review(code: String) -> String {
    code
}

/// A note
#[resource("notes://{id}", scopes = ["notes:read notes:write"])]
fn note(id: u32) -> String {
    id.to_string()
}

/// Asks nothing
#[prompt(scopes = [])]
fn nothing() -> String {
    String::new()
}

fn main() {}
