//! Every `#[tool(...)]` option lands in the spec.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use std::time::Duration;

use tool_core::{ToolKind, ToolRegistry, tool};

/// Send an email.
#[tool(
    name = "send-email_v2",
    kind = "network",
    read_only = false,
    destructive,
    idempotent = true,
    open_world,
    concurrency_safe,
    strict,
    requires_confirmation,
    editable_params = ["subject", "body_text"],
    url_patterns = ["*.mail.example.com", "www.example.*", "https://github.com/**/issues", "localhost:8080"],
    tags = ["mail", "network-2", "send_v2"],
    display(
        zh_Hans(name = "发送邮件", params(to = "收件人", body_text = "正文")),
        en(name = "Send email"),
        pt_BR(params(subject = "Assunto")),
    ),
    timeout = "2m",
)]
fn send_email(to: String, subject: String, #[arg(rename = "body_text")] body: String) -> String {
    format!("{to} {subject} {body}")
}

/// Defaults for every option.
#[tool]
fn plain() {}

/// Timeouts in other units.
#[tool(timeout = "1500ms")]
fn quick() {}

/// Timeouts in hours.
#[tool(timeout = "1h", kind = "read")]
fn patient() {}

fn main() {
    let registry = ToolRegistry::global();
    let s = registry.get("send-email_v2").unwrap().spec();
    assert_eq!(s.kind, ToolKind::Network);
    assert!(!s.flags.read_only && s.flags.destructive && s.flags.idempotent && s.flags.open_world);
    assert!(s.flags.concurrency_safe && s.flags.strict && s.flags.requires_confirmation);
    assert_eq!(s.editable_params, ["subject", "body_text"]);
    assert_eq!(s.url_patterns.len(), 4);
    assert_eq!(s.tags, ["mail", "network-2", "send_v2"]);
    assert_eq!(s.display["zh-Hans"].name.as_deref(), Some("发送邮件"));
    assert_eq!(s.display["zh-Hans"].params["to"], "收件人");
    assert_eq!(s.display["zh-Hans"].params["body_text"], "正文");
    assert_eq!(s.display["en"].name.as_deref(), Some("Send email"));
    assert_eq!(s.display["pt-BR"].params["subject"], "Assunto");
    assert_eq!(s.timeout, Some(Duration::from_secs(120)));
    let source = s.source.as_ref().unwrap();
    assert!(source.file.ends_with("options.rs"), "{source}");
    assert_eq!(source.line, 30, "the line of the fn name");

    let p = registry.get("plain").unwrap().spec();
    assert_eq!(p.kind, ToolKind::Other);
    assert!(!p.flags.read_only && !p.flags.destructive && !p.flags.idempotent && !p.flags.open_world);
    assert!(!p.flags.concurrency_safe && !p.flags.strict && !p.flags.requires_confirmation);
    assert!(p.editable_params.is_empty() && p.url_patterns.is_empty() && p.display.is_empty());
    assert!(p.tags.is_empty());
    assert_eq!(p.timeout, None);
    assert_eq!(registry.get("quick").unwrap().spec().timeout, Some(Duration::from_millis(1500)));
    let patient = registry.get("patient").unwrap().spec();
    assert_eq!((patient.kind, patient.timeout), (ToolKind::Read, Some(Duration::from_secs(3600))));
}
