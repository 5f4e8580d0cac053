use tool_core::tool;

/// Send an email.
#[tool(editable_params = ["body"])]
fn send_email(to: String, body: String) -> String {
    format!("{to} {body}")
}

fn main() {}
