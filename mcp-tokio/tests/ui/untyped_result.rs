use mcp_sansio_tokio::tool;

struct Opaque;

/// Returns something that is neither text nor a JSON value with a schema
#[tool]
async fn opaque() -> Opaque {
    Opaque
}

fn main() {}
