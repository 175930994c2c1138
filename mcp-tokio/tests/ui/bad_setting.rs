use mcp_sansio_tokio::tool;

/// Reads a file
#[tool(readonly)]
async fn read_file(path: String) -> String {
    path
}

fn main() {}
