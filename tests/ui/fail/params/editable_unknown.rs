use tool_core::tool;

/// Send an email.
#[tool(requires_confirmation, editable_params = ["body", "subjcet"])]
fn send_email(to: String, subject: String, body: String) -> String {
    format!("{to} {subject} {body}")
}

fn main() {}
