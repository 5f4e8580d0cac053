use tool_core::tool;

/// Look up a user.
#[tool]
fn lookup(#[context] user: String) -> String {
    user
}

fn main() {}
