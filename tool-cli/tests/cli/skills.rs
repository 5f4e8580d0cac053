//! `tool skills`, `--skills-dir` / `$AGENT_TOOLS_SKILLS` and the `skill`
//! tool from the command line; `tool list --tokens`.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::{TempDir, code, one_json_line, run, stderr, stdout, tool};

fn skill(dir: &Path, name: &str, text: &str) {
    fs::create_dir_all(dir.join(name)).expect("skill folder");
    fs::write(dir.join(name).join("SKILL.md"), text).expect("SKILL.md");
}

fn skills_dir() -> TempDir {
    let dir = TempDir::new();
    skill(
        dir.path(),
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUse [the guide](guide.md).\n",
    );
    fs::write(dir.path().join("pdf-forms/guide.md"), "GUIDE TEXT\n").expect("guide");
    skill(
        dir.path(),
        "notes",
        "---\nname: notes\ndescription: Take notes.\n---\nBody.\n",
    );
    dir
}

#[test]
fn skills_lists_name_description_and_path() {
    let dir = skills_dir();
    let out = run(["--skills-dir", dir.arg(), "skills"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let d = dir.path().display();
    assert_eq!(
        stdout(&out),
        format!(
            "notes      Take notes.  ({d}/notes/SKILL.md)\n\
             pdf-forms  Fill PDF forms.  ({d}/pdf-forms/SKILL.md)\n"
        )
    );
    let out = tool()
        .env(
            "AGENT_TOOLS_SKILLS",
            format!("/nonexistent-skills:{}", dir.arg()),
        )
        .args(["skills", "--json"])
        .output()
        .expect("runs");
    let rows: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(rows[1]["name"], "pdf-forms");
    assert_eq!(rows[1]["description"], "Fill PDF forms.");
    assert_eq!(rows[1]["path"], format!("{d}/pdf-forms/SKILL.md"));
    // The missing folder of the variable is reported; the listing still comes.
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("/nonexistent-skills: cannot open the skills folder"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn malformed_skill_is_reported_with_file_and_line() {
    let dir = skills_dir();
    skill(
        dir.path(),
        "broken",
        "---\nname: broken\ndescription: x: y\n---\n",
    );
    let out = run(["--skills-dir", dir.arg(), "skills"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out).lines().count(),
        2,
        "the good skills are listed"
    );
    let err = stderr(&out);
    let file = dir.path().join("broken/SKILL.md");
    assert!(
        err.contains(&format!(
            "warning: skill left out: {}:3: invalid YAML front matter: mapping values are not allowed",
            file.display()
        )),
        "{err}"
    );
}

#[test]
fn skills_without_a_folder_is_a_usage_error() {
    let out = tool()
        .env_remove("AGENT_TOOLS_SKILLS")
        .arg("skills")
        .output()
        .expect("runs");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("give --skills-dir DIR"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn skill_tool_is_listed_and_called() {
    let dir = skills_dir();
    let ws = TempDir::new();
    let out = run(["--skills-dir", dir.arg(), "schema", "skill"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let schema: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let description = schema[0]["description"].as_str().expect("description");
    assert!(
        description.ends_with("Skills:\n- notes: Take notes.\n- pdf-forms: Fill PDF forms."),
        "{description}"
    );
    // Without the option there is no such tool.
    assert_eq!(code(&run(["schema", "skill"])), 2);

    let out = run([
        "--skills-dir",
        dir.arg(),
        "--workspace",
        ws.arg(),
        "call",
        "skill",
        "--name=pdf-forms",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let result = one_json_line(&out);
    let guide = dir.path().join("pdf-forms/guide.md");
    let output = result["output"].as_str().expect("output");
    assert!(
        output.contains(&format!("Use [the guide]({}).", guide.display())),
        "{output}"
    );
    assert!(!output.contains("cannot open"), "{output}");

    // read_file reaches the file beside the skill (a read-only root) ...
    let out = run([
        "--skills-dir",
        dir.arg(),
        "--workspace",
        ws.arg(),
        "call",
        "read_file",
        &format!("--file-path={}", guide.display()),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        one_json_line(&out)["output"]
            .as_str()
            .expect("output")
            .contains("GUIDE TEXT")
    );
    // ... and not without the option.
    let out = run([
        "--workspace",
        ws.arg(),
        "call",
        "read_file",
        &format!("--file-path={}", guide.display()),
    ]);
    assert_eq!(code(&out), 1);

    let out = run(["--skills-dir", dir.arg(), "call", "skill", "--name=pdf"]);
    assert_eq!(code(&out), 2, "an unknown name is an invalid argument");
    let message = one_json_line(&out)["error"]["message"].clone();
    assert_eq!(
        message,
        "No skill named `pdf`. Did you mean `pdf-forms`? Skills: notes, pdf-forms."
    );
}

#[test]
fn list_tokens_shows_each_format_and_a_total() {
    let out = run(["list", "--tokens"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["tool", "openai", "anthropic", "gemini", "mcp"]
    );
    let rows: Vec<Vec<&str>> = lines[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .take_while(|w: &Vec<&str>| w[0] != "total")
        .collect();
    assert!(rows.iter().any(|r| r[0] == "read_file"));
    let total: Vec<usize> = lines
        .iter()
        .find(|l| l.starts_with("total "))
        .expect("a total row")
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse().expect("a count"))
        .collect();
    for (column, sum) in total.iter().enumerate() {
        let added: usize = rows
            .iter()
            .filter_map(|r| r[column + 1].parse::<usize>().ok())
            .sum();
        assert_eq!(added, *sum, "column {column}");
    }

    let out = run(["list", "--tokens", "--json"]);
    let value: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(value["encoding"], "o200k_base");
    let read = value["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "read_file")
        .expect("read_file");
    let row = rows.iter().find(|r| r[0] == "read_file").expect("row");
    assert_eq!(read["openai"].to_string(), row[1]);
    assert_eq!(read["mcp"].to_string(), row[4]);
    assert!(read["openai"].as_u64().expect("count") > 50);
}
