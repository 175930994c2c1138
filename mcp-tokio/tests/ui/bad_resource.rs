use mcp_sansio_tokio::resource;

/// An item by number
#[resource("test://items/{id}")]
fn item(number: u32) -> String {
    number.to_string()
}

fn main() {}
