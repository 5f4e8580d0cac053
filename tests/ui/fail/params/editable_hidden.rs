use tool_core::tool;

/// Send an email.
#[tool(requires_confirmation, hidden_params = ["sender"], editable_params = ["body", "sender"])]
fn send_email(to: String, body: String, sender: String) -> String {
    format!("{to} {body} {sender}")
}

fn main() {}
