use mcp_sansio_tokio::tool;

/// Adds two numbers
#[tool]
async fn add((a, b): (f64, f64)) -> String {
    (a + b).to_string()
}

fn main() {}
