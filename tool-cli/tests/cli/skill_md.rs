//! `tool skill-md`: SKILL.md files for the program, for tools and for an
//! imported MCP server, read back by the skills loader (`tool skills`) and
//! their usage lines run as written.

use serde_json::{Value, json};

use crate::support::{BIN, TempDir, code, run, stderr, stdout, tool};

/// `tool --skills-dir DIR skills --json`: what the loader made of DIR.
fn loaded(dir: &TempDir) -> Vec<Value> {
    let out = run(["--skills-dir", dir.arg(), "skills", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no skill left out");
    serde_json::from_str::<Value>(&stdout(&out))
        .expect("JSON")
        .as_array()
        .expect("array")
        .clone()
}

#[test]
fn the_programs_skill_loads_back_and_lists_every_tool() {
    let out = run(["skill-md"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("---\nname: tool\ndescription: \"Run the `tool` command-line tools ("),
        "{text}"
    );
    for line in [
        "- `goal` (write): ",
        "- `read_file` (read): ",
        "- `bash_command` (exec): ",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    let dir = TempDir::new();
    let out = run(["skill-md", "--dir", dir.arg()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let file = dir.path().join("tool/SKILL.md");
    assert_eq!(stdout(&out).trim(), file.display().to_string());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let skills = loaded(&dir);
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0]["name"], "tool");
    assert!(
        skills[0]["description"]
            .as_str()
            .unwrap()
            .ends_with("todo_write, web_fetch, web_search, write_file."),
        "{}",
        skills[0]["description"]
    );
}

#[test]
fn a_tools_skill_gives_a_usage_line_that_runs_as_written() {
    let (ws, dir) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let out = run([
        "--workspace",
        ws.arg(),
        "skill-md",
        "--dir",
        dir.arg(),
        "read_file",
        "grep_content",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let skills = loaded(&dir);
    let names: Vec<&str> = skills.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["grep-content", "read-file"]);
    let text = std::fs::read_to_string(dir.path().join("read-file/SKILL.md")).unwrap();
    assert!(
        text.contains("- `--file_path=…` (string, required): "),
        "{text}"
    );
    assert!(
        text.contains("- `--offset=…` (integer, default 1)"),
        "{text}"
    );
    // The usage line names this binary and the workspace: run it from elsewhere.
    let usage = text
        .lines()
        .find(|l| l.starts_with('`') && l.contains(" call read_file --file_path=…"))
        .expect("a usage line")
        .trim_matches('`')
        .replace("--file_path=…", "--file_path=notes.txt");
    assert!(usage.starts_with(BIN), "{usage}");
    let ran = std::process::Command::new("sh")
        .args(["-c", &usage])
        .current_dir("/")
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&ran.stdout).expect("one JSON result");
    assert!(result["error"].is_null(), "{result}");
    assert!(
        result["output"].as_str().unwrap().contains("alpha"),
        "{result}"
    );

    let out = run(["skill-md", "read_file", "grep_content"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("2 skills asked for: give --dir DIR"),
        "{}",
        stderr(&out)
    );
    let out = run(["skill-md", "read_fil"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown tool `read_fil`"),
        "{}",
        stderr(&out)
    );
}

/// An MCP server (this program's own `tool serve`, over stdio) as one
/// skill: its tools described for calls by name, loadable by the loader.
#[test]
fn an_imported_mcp_servers_tools_become_one_skill() {
    let (served, here, dir) = (TempDir::new(), TempDir::new(), TempDir::new());
    let config = json!({"mcpServers": {"files": {
        "command": BIN,
        "args": ["serve", "--workspace", served.arg()],
        "env": {"RUST_LOG": "off"}
    }}});
    let path = here.path().join(".mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = tool()
        .args(["--mcp-config", path.to_str().unwrap()])
        .args(["skill-md", "--mcp", "files", "--dir", dir.arg()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let skills = loaded(&dir);
    assert_eq!(skills.len(), 1, "{skills:?}");
    assert_eq!(skills[0]["name"], "mcp-files");
    let description = skills[0]["description"].as_str().unwrap();
    assert!(
        description.starts_with("Use the `files` MCP server's tools: apply_patch, ask_user,"),
        "{description}"
    );
    let text = std::fs::read_to_string(dir.path().join("mcp-files/SKILL.md")).unwrap();
    assert!(text.contains("imported as `files__<tool>`"), "{text}");
    assert!(text.contains("Call these tools by name"), "{text}");
    assert!(
        text.contains("### `files__read_file`\n\n")
            && text.contains("`files__read_file {\"file_path\": …}`"),
        "{text}"
    );
    assert!(
        text.contains("- `file_path` (string, required): "),
        "{text}"
    );
    let out = tool()
        .args(["--mcp-config", path.to_str().unwrap()])
        .args(["skill-md", "--mcp", "nope"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no tools named `nope__…`"),
        "{}",
        stderr(&out)
    );
}
