//! `tool serve --skills-as-prompts`: the loaded skills offered as MCP
//! prompts and the files beside each as `skill://` resources, talked to with
//! rmcp's own client over the served binary's stdio.

use std::fs;

use serde_json::json;
use tool_mcp::rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
use tool_mcp::rmcp::service::RunningService;
use tool_mcp::rmcp::transport::TokioChildProcess;
use tool_mcp::rmcp::{RoleClient, ServiceError, ServiceExt};

use crate::support::{BIN, TempDir};

/// A skills folder: `pdf-forms` with a guide, a script, an image, a file
/// over 1 MiB and a symbolic link out of its folder; `notes` with nothing
/// beside its `SKILL.md`. Also a secret file beside the skills folder.
fn skills_dir() -> TempDir {
    let dir = TempDir::new();
    let skills = dir.path().join("skills");
    let pdf = skills.join("pdf-forms");
    fs::create_dir_all(pdf.join("scripts")).expect("sets up the skills folder");
    fs::write(
        pdf.join("SKILL.md"),
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n\nUse [the guide](guide.md).\n",
    )
    .expect("sets up the skills folder");
    fs::write(pdf.join("guide.md"), "GUIDE TEXT\n").expect("sets up the skills folder");
    fs::write(pdf.join("scripts/fill.py"), "print('fill')\n").expect("sets up the skills folder");
    fs::write(pdf.join("logo.png"), [0x89_u8, b'P', b'N', b'G'])
        .expect("sets up the skills folder");
    fs::write(pdf.join("big.txt"), vec![b'x'; (1 << 20) + 1]).expect("sets up the skills folder");
    fs::write(dir.path().join("secret.txt"), "SECRET\n").expect("sets up the skills folder");
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), pdf.join("leak.txt"))
        .expect("sets up the skills folder");
    let notes = skills.join("notes");
    fs::create_dir_all(&notes).expect("sets up the skills folder");
    fs::write(
        notes.join("SKILL.md"),
        "---\nname: notes\ndescription: Take notes.\n---\nWrite them down.\n",
    )
    .expect("sets up the skills folder");
    dir
}

async fn serve(dir: &TempDir, extra: &[&str]) -> RunningService<RoleClient, ()> {
    let skills = dir.path().join("skills");
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["serve", "--workspace", dir.arg(), "--no-index"])
        .args(extra)
        .arg("--skills-dir")
        .arg(&skills)
        .env("TRACE_ID", "")
        .stderr(std::process::Stdio::null());
    ().serve(TokioChildProcess::new(command).expect("spawns tool serve"))
        .await
        .expect("connects to tool serve")
}

fn mcp_error(e: ServiceError) -> (i32, String) {
    match e {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string()),
        other => panic!("not an MCP error: {other}"),
    }
}

#[tokio::test]
async fn skills_are_prompts_and_their_files_resources() {
    let dir = skills_dir();
    let client = serve(&dir, &["--skills-as-prompts"]).await;
    let peer = client.peer();

    let prompts = serde_json::to_value(peer.list_all_prompts().await.unwrap()).unwrap();
    assert_eq!(
        prompts,
        json!([
            {"name": "notes", "description": "Take notes.", "arguments": [
                {"name": "task", "description": "What to do with the skill (appended to its instructions).", "required": false}
            ]},
            {"name": "pdf-forms", "description": "Fill PDF forms.", "arguments": [
                {"name": "task", "description": "What to do with the skill (appended to its instructions).", "required": false}
            ]},
        ])
    );

    let got = peer
        .get_prompt(GetPromptRequestParams::new("pdf-forms"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "Use [the guide](guide.md)."}}])
    );
    assert_eq!(got.description.as_deref(), Some("Fill PDF forms."));
    let mut args = serde_json::Map::new();
    args.insert("task".into(), json!("Fill form A."));
    let with_task = peer
        .get_prompt(GetPromptRequestParams::new("notes").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&with_task.messages).unwrap()[0]["content"]["text"],
        "Write them down.\n\nTask: Fill form A."
    );

    let resources = peer.list_all_resources().await.unwrap();
    let listed: Vec<(String, Option<String>, Option<u64>)> = resources
        .iter()
        .map(|r| (r.uri.clone(), r.mime_type.clone(), r.size))
        .collect();
    let entry =
        |uri: &str, mime: &str, size: u64| (uri.to_owned(), Some(mime.to_owned()), Some(size));
    assert_eq!(
        listed,
        [
            entry("skill://pdf-forms/big.txt", "text/plain", (1 << 20) + 1),
            entry("skill://pdf-forms/guide.md", "text/markdown", 11),
            entry("skill://pdf-forms/logo.png", "image/png", 4),
            entry("skill://pdf-forms/scripts/fill.py", "text/x-python", 14),
        ]
    );

    let read = |uri: &str| peer.read_resource(ReadResourceRequestParams::new(uri));
    let guide = serde_json::to_value(read("skill://pdf-forms/guide.md").await.unwrap()).unwrap();
    assert_eq!(
        guide["contents"],
        json!([{"uri": "skill://pdf-forms/guide.md", "mimeType": "text/markdown", "text": "GUIDE TEXT\n"}])
    );
    let logo = serde_json::to_value(read("skill://pdf-forms/logo.png").await.unwrap()).unwrap();
    assert_eq!(logo["contents"][0]["blob"], "iVBORw==");
    assert_eq!(logo["contents"][0]["mimeType"], "image/png");

    // Refusals, each saying why: a symbolic link out of the folder (not
    // listed, but reachable through the skill:// template), a file over the
    // 1 MiB cap, `..`, a skill that does not exist.
    let (code, message) = mcp_error(read("skill://pdf-forms/leak.txt").await.unwrap_err());
    assert_eq!(code, -32603);
    assert_eq!(
        message,
        "skill `pdf-forms`: leak.txt leads out of the skill's folder (a symbolic link); only \
         files inside it can be read"
    );
    let (code, message) = mcp_error(read("skill://pdf-forms/big.txt").await.unwrap_err());
    assert_eq!(code, -32603);
    assert_eq!(
        message,
        "skill `pdf-forms`: big.txt is 1048577 bytes; a skill's file is read up to 1048576 \
         bytes (1 MiB)"
    );
    let (_, message) = mcp_error(
        read("skill://pdf-forms/../notes/SKILL.md")
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        "skill `pdf-forms`: ../notes/SKILL.md is not a path inside the skill's folder (relative, \
         without `..`)"
    );
    let (_, message) = mcp_error(read("skill://nothing/a.md").await.unwrap_err());
    assert_eq!(
        message,
        "no skill named `nothing` (skills: notes, pdf-forms)"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_the_flag_no_skill_is_a_prompt() {
    let dir = skills_dir();
    let client = serve(&dir, &[]).await;
    let peer = client.peer();
    assert_eq!(peer.list_all_prompts().await.unwrap(), []);
    assert_eq!(peer.list_all_resources().await.unwrap(), []);
    let (code, _) = mcp_error(
        peer.read_resource(ReadResourceRequestParams::new("skill://pdf-forms/guide.md"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, -32002);
    // The skill tool is still there.
    let tools = peer.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "skill"));
    client.cancel().await.unwrap();
}

#[test]
fn skills_as_prompts_without_a_skills_folder_warns() {
    let dir = TempDir::new();
    let out = crate::support::tool()
        .env_remove("AGENT_TOOLS_SKILLS")
        .args(["serve", "--workspace", dir.arg(), "--no-index"])
        .arg("--skills-as-prompts")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = crate::support::stderr(&out);
    assert!(
        err.contains(
            "warning: --skills-as-prompts: no skills folder (give --skills-dir DIR or set \
             AGENT_TOOLS_SKILLS); no skill is offered as a prompt"
        ),
        "{err}"
    );
}
