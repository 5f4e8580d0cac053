//! Skills (issue 14, part 3): loading `SKILL.md` folders from real files
//! (good, malformed, missing), the `skill` tool's description and answers,
//! and reading the files beside a skill with `read_file`.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns: a failed setup should stop the test"
)]

use std::fs;
use std::path::Path;

use serde_json::json;
use tool_builtins::skills::{MAX_SKILLS, SkillSet};
use tool_core::{ErrorKind, ToolRegistry};

fn skill(dir: &Path, folder: &str, text: &str) {
    let d = dir.join(folder);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("SKILL.md"), text).unwrap();
}

fn good(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n")
}

/// The diagnostics as `file-name:line: message`, paths cut to the last two components.
fn diags(set: &SkillSet) -> Vec<String> {
    set.diagnostics()
        .iter()
        .map(|d| {
            let parts: Vec<_> = d.path.components().rev().take(2).collect();
            let short: std::path::PathBuf = parts.into_iter().rev().collect();
            match d.line {
                Some(l) => format!("{}:{l}: {}", short.display(), d.message),
                None => format!("{}: {}", short.display(), d.message),
            }
        })
        .collect()
}

#[test]
fn good_skills_load_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "zeta", &good("zeta", "Last one."));
    skill(
        dir.path(),
        "alpha",
        "---\nname: alpha\ndescription: |\n  First\n  one.\nlicense: MIT\nallowed-tools: [read_file]\nmetadata:\n  version: \"1\"\n---\nBody of alpha.\n",
    );
    fs::create_dir_all(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join("README.md"), "not a skill").unwrap();
    let set = SkillSet::load([dir.path()]);
    assert_eq!(diags(&set), Vec::<String>::new());
    let names: Vec<_> = set.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta"]);
    let alpha = set.get("alpha").unwrap();
    assert_eq!(alpha.description, "First one.");
    assert_eq!(alpha.body, "Body of alpha.");
    assert_eq!(
        alpha.folder,
        dir.path().join("alpha").canonicalize().unwrap()
    );
    assert_eq!(set.folders(), [dir.path().canonicalize().unwrap()]);
}

#[test]
fn malformed_skills_are_reported_and_the_others_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    skill(d, "ok", &good("ok", "Fine."));
    skill(
        d,
        "bad-yaml",
        "---\nname: bad-yaml\ndescription: \"unclosed\n---\nbody\n",
    );
    skill(d, "no-name", "---\ndescription: Has no name.\n---\nbody\n");
    skill(
        d,
        "no-description",
        "---\nname: no-description\n---\nbody\n",
    );
    skill(d, "mismatch", &good("other-name", "Wrong folder."));
    skill(d, "Upper", &good("Upper", "Bad name."));
    skill(d, "no-front-matter", "# Just markdown\n");
    skill(d, "unclosed", "---\nname: unclosed\ndescription: d\n");
    fs::create_dir_all(d.join("empty")).unwrap();
    fs::write(d.join("SKILL.md"), good("stray", "At the top.")).unwrap();
    let set = SkillSet::load([d]);
    let names: Vec<_> = set.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let got = diags(&set);
    let find = |prefix: &str| -> String {
        got.iter()
            .find(|d| d.starts_with(prefix))
            .unwrap_or_else(|| panic!("no diagnostic for {prefix}: {got:#?}"))
            .clone()
    };
    assert!(find("Upper/SKILL.md:2: ").contains("not a valid skill name"));
    let yaml = find("bad-yaml/SKILL.md:");
    assert!(yaml.contains("invalid YAML front matter"), "{yaml}");
    let line: u64 = yaml.split(':').nth(1).unwrap().parse().unwrap();
    assert!(
        (3..=4).contains(&line),
        "the line of the unclosed quote: {yaml}"
    );
    assert_eq!(
        find("no-name/"),
        "no-name/SKILL.md:2: the front matter has no `name`"
    );
    assert_eq!(
        find("no-description/"),
        "no-description/SKILL.md:2: the front matter has no `description`"
    );
    assert!(find("mismatch/SKILL.md:2: ").contains("must match its folder's name `mismatch`"));
    assert!(find("no-front-matter/SKILL.md:1: ").contains("must start with a line `---`"));
    assert!(find("unclosed/SKILL.md:").contains("no closing `---`"));
    assert!(find("empty/SKILL.md: ").contains("has no SKILL.md"));
    let stray = got
        .iter()
        .find(|d| d.contains("SKILL.md: a skills folder holds one folder per skill"))
        .unwrap();
    assert!(stray.ends_with("<name>/SKILL.md"), "{stray}");
    assert_eq!(got.len(), 9, "{got:#?}");
    // Display is PATH:LINE: MESSAGE.
    let shown = set.diagnostics()[0].to_string();
    assert!(
        shown.starts_with(&d.canonicalize().unwrap().display().to_string()),
        "{shown}"
    );
}

#[test]
fn duplicate_names_keep_the_first_folder() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    skill(
        first.path(),
        "lint",
        &good("lint", "From the first folder."),
    );
    skill(
        second.path(),
        "lint",
        &good("lint", "From the second folder."),
    );
    skill(second.path(), "fmt", &good("fmt", "Only in the second."));
    let set = SkillSet::load([first.path(), second.path()]);
    assert_eq!(
        set.get("lint").unwrap().description,
        "From the first folder."
    );
    assert!(set.get("fmt").is_some());
    let got = diags(&set);
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("lint/SKILL.md: skipped: a skill named `lint` was already loaded from")
    );
}

#[test]
fn missing_folders_and_files() {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "ok", &good("ok", "Fine."));
    let gone = dir.path().join("does-not-exist");
    let file = dir.path().join("ok/SKILL.md");
    let set = SkillSet::load([gone.as_path(), file.as_path(), dir.path()]);
    assert_eq!(set.skills().len(), 1);
    let got: Vec<_> = set.diagnostics().iter().map(ToString::to_string).collect();
    assert!(
        got[0].contains("does-not-exist: cannot open the skills folder"),
        "{got:?}"
    );
    assert!(
        got[1].ends_with("SKILL.md: the skills folder is not a folder"),
        "{got:?}"
    );
    assert_eq!(got.len(), 2);
    assert_eq!(set.folders().len(), 1);
}

#[test]
fn limits() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!(
        "---\nname: big\ndescription: d\n---\n{}",
        "word ".repeat(20_000)
    );
    skill(dir.path(), "big", &big);
    let d = dir.path().join("binary");
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join("SKILL.md"),
        b"---\nname: binary\ndescription: \xff\n---\n",
    )
    .unwrap();
    let set = SkillSet::load([dir.path()]);
    assert!(set.skills().is_empty());
    let got = diags(&set);
    assert!(
        got.iter()
            .any(|d| d.starts_with("big/SKILL.md: ") && d.contains("larger than")),
        "{got:?}"
    );
    assert!(got.iter().any(|d| d.contains("not UTF-8")), "{got:?}");

    let many = tempfile::tempdir().unwrap();
    for i in 0..=MAX_SKILLS {
        let name = format!("s{i:03}");
        skill(many.path(), &name, &good(&name, "One of many."));
    }
    let set = SkillSet::load([many.path()]);
    assert_eq!(set.skills().len(), MAX_SKILLS);
    assert_eq!(set.diagnostics().len(), 1);
    assert!(set.diagnostics()[0].message.contains("at most 256 skills"));
}

fn registry(set: &SkillSet) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(set.tool().unwrap()).unwrap();
    r
}

#[test]
fn tool_description_lists_each_skill_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    skill(
        dir.path(),
        "pdf-forms",
        &good("pdf-forms", "Fill PDF forms. Use for any .pdf form."),
    );
    let long = "x".repeat(600);
    skill(dir.path(), "long", &good("long", &long));
    let set = SkillSet::load([dir.path()]);
    let tool = set.tool().unwrap();
    let spec = tool.spec();
    assert_eq!(spec.name, "skill");
    assert!(spec.flags.read_only);
    let lines: Vec<&str> = spec.description.lines().collect();
    assert_eq!(
        lines[lines.len() - 2].chars().count(),
        "- long: ".len() + 251
    );
    assert!(lines[lines.len() - 2].ends_with('…'));
    assert_eq!(
        lines[lines.len() - 1],
        "- pdf-forms: Fill PDF forms. Use for any .pdf form."
    );
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
            "required": ["name"],
            "additionalProperties": false
        })
    );

    let empty = SkillSet::load(Vec::<&Path>::new());
    assert!(
        empty
            .tool()
            .unwrap()
            .spec()
            .description
            .ends_with("Skills: none are installed.")
    );
}

#[tokio::test]
async fn call_returns_the_body_with_paths_read_file_opens() {
    let ws = tempfile::tempdir().unwrap();
    let skills_dir = ws.path().join(".skills");
    skill(
        &skills_dir,
        "pdf-forms",
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\n\
         Read [the field guide](reference/fields.md) first, then run `scripts/fill.py`.\n\
         See also [gone](missing.md).\n",
    );
    let folder = skills_dir.join("pdf-forms");
    fs::create_dir_all(folder.join("reference")).unwrap();
    fs::create_dir_all(folder.join("scripts")).unwrap();
    fs::write(
        folder.join("reference/fields.md"),
        "Field NAME is the full name.\n",
    )
    .unwrap();
    fs::write(folder.join("scripts/fill.py"), "print('x')\n").unwrap();
    let set = SkillSet::load([&skills_dir]);
    let registry = registry(&set);
    let ctx = tool_builtins::context(ws.path()).unwrap();
    let result = registry
        .execute("skill", json!({"name": "pdf-forms"}), &ctx)
        .await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(
        result.output,
        "Skill `pdf-forms` (folder .skills/pdf-forms). Paths to files beside it are written so \
         read_file opens them; other relative paths are relative to that folder.\n\n\
         Read [the field guide](.skills/pdf-forms/reference/fields.md) first, then run \
         `.skills/pdf-forms/scripts/fill.py`.\n\
         See also [gone](missing.md).\n\n\
         Files beside it:\n\
         - .skills/pdf-forms/reference/fields.md\n\
         - .skills/pdf-forms/scripts/fill.py\n\n\
         Not found in the skill's folder: missing.md.\n"
    );
    // The rewritten path opens with read_file as the model would call it.
    let builtins = tool_builtins::registry();
    let read = builtins
        .execute(
            "read_file",
            json!({"file_path": ".skills/pdf-forms/reference/fields.md"}),
            &ctx,
        )
        .await;
    assert!(
        read.output.contains("Field NAME is the full name."),
        "{read:?}"
    );
}

#[tokio::test]
async fn skills_outside_the_workspace_are_read_through_read_only_roots() {
    let ws = tempfile::tempdir().unwrap();
    let skills_dir = tempfile::tempdir().unwrap();
    skill(
        skills_dir.path(),
        "notes",
        "---\nname: notes\ndescription: Notes.\n---\nUse [the template](template.md).\n",
    );
    fs::write(
        skills_dir.path().join("notes/template.md"),
        "TEMPLATE BODY\n",
    )
    .unwrap();
    // Beside the skills: a stray file, and a skill left out (name mismatch).
    fs::write(skills_dir.path().join("stray.txt"), "STRAY\n").unwrap();
    skill(
        skills_dir.path(),
        "broken",
        "---\nname: other\ndescription: Left out.\n---\nBody.\n",
    );
    let set = SkillSet::load([skills_dir.path()]);
    let registry = registry(&set);
    let template = skills_dir
        .path()
        .canonicalize()
        .unwrap()
        .join("notes/template.md");

    // Without the read-only roots the answer says so, and read_file refuses.
    let plain = tool_builtins::context(ws.path()).unwrap();
    let result = registry
        .execute("skill", json!({"name": "notes"}), &plain)
        .await;
    assert!(
        result
            .output
            .contains(&format!("[the template]({})", template.display()))
    );
    assert!(
        result
            .output
            .contains("read_file cannot open files in this folder")
    );
    let builtins = tool_builtins::registry();
    let args = json!({"file_path": template.display().to_string()});
    let refused = builtins.execute("read_file", args.clone(), &plain).await;
    assert!(refused.is_error());

    let ctx = set.make_readable(plain);
    let result = registry
        .execute("skill", json!({"name": "notes"}), &ctx)
        .await;
    assert!(!result.output.contains("cannot open"), "{}", result.output);
    let read = builtins.execute("read_file", args, &ctx).await;
    assert!(read.output.contains("TEMPLATE BODY"), "{read:?}");
    // Read-only: writing there is refused.
    let write = builtins
        .execute(
            "write_file",
            json!({"file_path": template.display().to_string(), "content": "x"}),
            &ctx,
        )
        .await;
    assert!(write.is_error());
    assert_eq!(fs::read_to_string(&template).unwrap(), "TEMPLATE BODY\n");
    // Only the loaded skill's own folder is readable: not the stray file
    // beside the skill folders, not the left-out skill, not a listing of
    // the configured folder.
    let root = skills_dir.path().canonicalize().unwrap();
    for outside in [root.join("stray.txt"), root.join("broken/SKILL.md")] {
        let r = builtins
            .execute(
                "read_file",
                json!({"file_path": outside.display().to_string()}),
                &ctx,
            )
            .await;
        assert!(
            r.is_error(),
            "{} was readable: {}",
            outside.display(),
            r.output
        );
    }
    let listing = builtins
        .execute(
            "list_dir",
            json!({"path": root.display().to_string()}),
            &ctx,
        )
        .await;
    assert!(listing.is_error(), "{}", listing.output);
}

#[tokio::test]
async fn unknown_name_lists_the_skills_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    skill(
        dir.path(),
        "pdf-forms",
        &good("pdf-forms", "Fill PDF forms."),
    );
    skill(
        dir.path(),
        "release-notes",
        &good("release-notes", "Notes."),
    );
    let set = SkillSet::load([dir.path()]);
    let registry = registry(&set);
    let ctx = tool_builtins::context(dir.path()).unwrap();
    let result = registry
        .execute("skill", json!({"name": "pdf-form"}), &ctx)
        .await;
    let error = result.error.unwrap();
    assert_eq!(error.kind, ErrorKind::InvalidArguments);
    assert_eq!(
        error.message,
        "No skill named `pdf-form`. Did you mean `pdf-forms`? Skills: pdf-forms, release-notes."
    );
    // Arguments of the wrong shape get the pipeline's own messages.
    let result = registry.execute("skill", json!({}), &ctx).await;
    assert_eq!(
        result.error.unwrap().message,
        "Missing required parameter `name` of `skill`: expected a string."
    );
    let result = registry.execute("skill", json!({"name": 7}), &ctx).await;
    assert_eq!(
        result.error.unwrap().message,
        "Invalid value for parameter `name` of `skill`: expected a string, but received an integer 7."
    );
    // The name is taken as sent: no trimming, no case folding.
    let result = registry
        .execute("skill", json!({"name": " pdf-forms"}), &ctx)
        .await;
    assert!(
        result
            .error
            .unwrap()
            .message
            .starts_with("No skill named ` pdf-forms`. Did you mean `pdf-forms`?")
    );
    let result = registry.execute("skill", json!({"name": 3}), &ctx).await;
    assert_eq!(result.error.unwrap().kind, ErrorKind::InvalidArguments);
}

/// Issue 23 item 2: a skill folder that is a symbolic link out of its
/// skills folder is left out, and its target never becomes readable.
#[test]
fn a_skill_folder_linking_out_of_the_skills_folder_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    let outside = dir.path().join("private");
    skill(&outside, "evil", &good("evil", "Looks harmless."));
    fs::write(outside.join("evil/secret.txt"), "secret").unwrap();
    fs::create_dir_all(&skills).unwrap();
    std::os::unix::fs::symlink(outside.join("evil"), skills.join("evil")).unwrap();
    skill(&skills, "fine", &good("fine", "A real one."));
    // A SKILL.md that links out of its folder is refused too.
    fs::create_dir_all(skills.join("sneaky")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("evil/SKILL.md"),
        skills.join("sneaky/SKILL.md"),
    )
    .unwrap();
    let set = SkillSet::load([&skills]);
    let names: Vec<_> = set.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fine"]);
    let d = diags(&set);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(
        d[0].starts_with("skills/evil: left out: this skill folder is a symbolic link to"),
        "{d:?}"
    );
    assert!(d[0].contains("outside the skills folder"), "{d:?}");
    assert!(
        d[1].contains("SKILL.md is a symbolic link leading out of the skill's folder"),
        "{d:?}"
    );
    let ws = tempfile::tempdir().unwrap();
    let ctx = set.make_readable(tool_builtins::context(ws.path()).unwrap());
    let roots = ctx
        .state::<tool_builtins::Workspace>()
        .unwrap()
        .read_only_roots()
        .to_vec();
    assert!(
        roots
            .iter()
            .all(|r| !r.starts_with(outside.canonicalize().unwrap())),
        "{roots:?}"
    );
}

/// Issue 23 item 3: a `SKILL.md` that is a FIFO (or another non-regular
/// file) is reported like any broken skill; loading does not block on it.
#[test]
fn a_fifo_skill_file_is_reported_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("pipe")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe/SKILL.md"))
        .status()
        .unwrap();
    assert!(made.success());
    skill(dir.path(), "fine", &good("fine", "A real one."));
    // On a thread, so that a regression fails the test instead of hanging it.
    let path = dir.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(SkillSet::load([path])).unwrap());
    let set = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("loading a FIFO SKILL.md must not block");
    assert_eq!(set.skills().len(), 1);
    assert_eq!(
        diags(&set),
        [
            "pipe/SKILL.md: SKILL.md is not a regular file (a FIFO, socket or device); replace it with a file"
        ]
    );
}

/// Issue 23 item 1: every configured skills folder is write-protected by
/// `make_readable`, inside the workspace or not, existing or not.
#[test]
fn make_readable_write_protects_every_configured_folder() {
    let ws = tempfile::tempdir().unwrap();
    let inside = ws.path().join(".skills");
    skill(&inside, "x", &good("x", "Inside the workspace."));
    let missing = ws.path().join("later-skills");
    let set = SkillSet::load([&inside, &missing]);
    let ctx = set.make_readable(tool_builtins::context(ws.path()).unwrap());
    let protected = tool_builtins::protected_folders(&ctx);
    let root = ws.path().canonicalize().unwrap();
    assert_eq!(
        protected.read_only,
        [root.join(".skills"), root.join("later-skills")]
    );
    assert!(!protected.hidden.is_empty());
    let w = ctx.state::<tool_builtins::Workspace>().unwrap();
    for path in [
        ".skills/x/SKILL.md",
        ".skills/new/SKILL.md",
        "later-skills/y/SKILL.md",
    ] {
        let err = w.resolve_for_write(path).unwrap_err().to_string();
        assert!(
            err.contains("read-only folder (a configured skills folder"),
            "{path}: {err}"
        );
        // Reading is unchanged (the read path does not look at the protection).
        assert!(w.resolve(path).is_ok(), "{path}");
    }
    assert!(w.resolve_for_write("notes.md").is_ok());
    assert!(!missing.exists(), "nothing created");
}

/// Issue 26 (skills as prompts): `Skill::files` lists what is beside
/// `SKILL.md` with sizes and MIME types; `Skill::read_file` reads one only
/// from inside the skill's folder, regular and at most 1 MiB, and says why
/// it refuses.
#[test]
fn files_beside_a_skill_are_listed_and_read_confined() {
    use tool_builtins::skills::{MAX_SKILL_FILE_BYTES, SkillFileError};
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    skill(&skills, "pdf", &good("pdf", "PDF work."));
    let pdf = skills.join("pdf");
    fs::create_dir_all(pdf.join("ref/deep/deeper")).unwrap();
    fs::write(pdf.join("ref/forms.md"), "FORMS").unwrap();
    fs::write(pdf.join("ref/deep/data.json"), "{}").unwrap();
    fs::write(pdf.join("ref/deep/deeper/too-deep.md"), "x").unwrap();
    fs::write(pdf.join(".hidden"), "h").unwrap();
    fs::write(pdf.join("tool.bin"), [0_u8, 1]).unwrap();
    let big = usize::try_from(MAX_SKILL_FILE_BYTES).unwrap() + 1;
    fs::write(pdf.join("big.md"), vec![b'a'; big]).unwrap();
    fs::write(dir.path().join("secret.txt"), "SECRET").unwrap();
    fs::create_dir_all(dir.path().join("outside")).unwrap();
    fs::write(dir.path().join("outside/o.md"), "OUT").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), pdf.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), pdf.join("linked")).unwrap();
    std::os::unix::fs::symlink(pdf.join("ref/forms.md"), pdf.join("inner.md")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(pdf.join("pipe.md"))
        .status()
        .unwrap();
    assert!(made.success());

    let set = SkillSet::load([&skills]);
    let s = set.get("pdf").unwrap();
    let listed: Vec<String> = s
        .files()
        .iter()
        .map(|f| format!("{} {} {} {}", f.path, f.bytes, f.mime_type, f.is_text()))
        .collect();
    // In name order; hidden entries, symbolic links, special files and
    // what lies deeper than 3 levels are left out.
    assert_eq!(
        listed,
        [
            "big.md 1048577 text/markdown true",
            "ref/deep/data.json 2 application/json true",
            "ref/forms.md 5 text/markdown true",
            "tool.bin 2 application/octet-stream false",
        ]
    );

    assert_eq!(s.read_file("ref/forms.md").unwrap(), b"FORMS");
    assert_eq!(s.read_file("./ref/forms.md").unwrap(), b"FORMS");
    // A symbolic link that stays inside is followed; an unlisted file reads.
    assert_eq!(s.read_file("inner.md").unwrap(), b"FORMS");
    assert_eq!(s.read_file(".hidden").unwrap(), b"h");
    let refused = |rel: &str| s.read_file(rel).unwrap_err();
    assert_eq!(
        refused("leak.txt"),
        SkillFileError::Outside("leak.txt".into())
    );
    assert_eq!(
        refused("linked/o.md"),
        SkillFileError::Outside("linked/o.md".into())
    );
    for bad in [
        "../skills/pdf/SKILL.md",
        "ref/../../x",
        "/etc/passwd",
        "",
        ".",
    ] {
        assert_eq!(refused(bad), SkillFileError::NotInside(bad.into()), "{bad}");
    }
    assert_eq!(refused("ref"), SkillFileError::NotAFile("ref".into()));
    assert_eq!(
        refused("pipe.md"),
        SkillFileError::NotAFile("pipe.md".into())
    );
    assert_eq!(
        refused("nope.md"),
        SkillFileError::NotFound("nope.md".into())
    );
    let too_large = refused("big.md");
    assert_eq!(
        too_large,
        SkillFileError::TooLarge("big.md".into(), MAX_SKILL_FILE_BYTES + 1)
    );
    assert_eq!(
        too_large.to_string(),
        "big.md is 1048577 bytes; a skill's file is read up to 1048576 bytes (1 MiB)"
    );
    assert_eq!(
        refused("leak.txt").to_string(),
        "leak.txt leads out of the skill's folder (a symbolic link); only files inside it can be read"
    );
}
