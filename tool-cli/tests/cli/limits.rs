//! Patterns that used to abort the process (a stack overflow in the glob
//! compiler) come back as `invalid_arguments` in `call` and in `batch`, and
//! the batch goes on.

use serde_json::json;

use crate::support::{TempDir, code, json_lines, run, run_with_stdin, stderr, stdout};

fn nested(n: usize) -> String {
    format!("{}a{}", "{".repeat(n), "}".repeat(n))
}

#[test]
fn fifteen_thousand_nested_braces_are_an_argument_error_in_call() {
    let dir = TempDir::new();
    for args in [
        json!({"pattern": nested(15_000)}),
        json!({"pattern": "*".repeat(100_000)}),
        json!({"pattern": "x", "include": nested(15_000)}),
    ] {
        let tool = if args.get("include").is_some() {
            "grep_content"
        } else {
            "glob_files"
        };
        let out = run(["--workspace", dir.arg(), "call", tool, &args.to_string()]);
        assert_eq!(code(&out), 2, "{} {}", stdout(&out), stderr(&out));
        let text = stdout(&out) + &stderr(&out);
        assert!(
            text.contains("invalid_arguments") || text.contains("the limit is"),
            "{text}"
        );
        assert!(
            text.len() < 4_000,
            "the pattern is not echoed whole: {} bytes",
            text.len()
        );
    }
}

#[test]
fn a_batch_survives_hostile_patterns_and_answers_the_next_call() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("a.txt"), "needle\n").expect("write");
    let input = [
        json!({"name": "glob_files", "arguments": {"pattern": nested(15_000)}}),
        json!({"name": "grep_content", "arguments": {"pattern": "(".repeat(20_000)}}),
        json!({"name": "list_dir", "arguments": {"ignore": [nested(15_000)]}}),
        json!({"name": "grep_content", "arguments": {"pattern": "needle"}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let out = run_with_stdin(&["batch", "--workspace", dir.arg()], &input);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "{}", stderr(&out));
    for line in &lines[..3] {
        assert_eq!(line["error"]["kind"], "invalid_arguments", "{line}");
    }
    assert!(lines[3]["error"].is_null());
    assert!(
        lines[3]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("a.txt")
    );
}

/// Makes `names` in `dir`: 4×4 px PNGs whose `iCCP` profile inflates to
/// 768 MiB (about 0.75 MB of file each, from Python's zlib, streamed), and
/// runs `tool-fixtures call read_images` on them with `threads` decode
/// threads; Python's `getrusage(RUSAGE_CHILDREN)` gives the peak RSS of the
/// whole `tool` process. Returns (peak KiB, exit status, stdout).
#[allow(
    clippy::unwrap_used,
    reason = "test code: a malformed report should stop the test"
)]
fn read_images_peak(dir: &std::path::Path, names: &[&str], threads: u32) -> (u64, i32, String) {
    const SCRIPT: &str = r#"
import json, os, resource, struct, subprocess, sys, zlib
bin_, ws, threads, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
z = zlib.compressobj(9)
zero = bytes(1 << 20)
parts = [z.compress(zero) for _ in range(768)]
profile = b"".join(parts) + z.flush()
pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * 12 for _ in range(4)))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
       + chunk(b"iCCP", b"bomb\x00\x00" + profile) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))
for n in names:
    open(os.path.join(ws, n), "wb").write(png)
env = dict(os.environ, AGENT_TOOLS_DECODE_THREADS=threads)
env.pop("TRACE_ID", None)
out = subprocess.run([bin_, "call", "--workspace", ws, "read_images", "--paths=" + json.dumps(names)],
                     env=env, stdin=subprocess.DEVNULL, capture_output=True)
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "status": out.returncode, "stdout": out.stdout.decode(), "file_bytes": len(png)}))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT, crate::support::BIN, dir.to_str().unwrap()])
        .arg(threads.to_string())
        .args(names)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let file_bytes = report["file_bytes"].as_u64().unwrap();
    assert!(file_bytes < 1_000_000, "a small file: {file_bytes} bytes");
    (
        report["peak_kib"].as_u64().unwrap(),
        i32::try_from(report["status"].as_i64().unwrap()).unwrap(),
        report["stdout"].as_str().unwrap().to_owned(),
    )
}

/// Issue 23 item 7: README promises 512 MiB of decodes in flight for the
/// whole process; a PNG's `iCCP` profile was inflated outside that budget
/// (up to the image crate's 512 MiB default each: 526 MiB for one 4×4 px
/// file, growing with the cores). Six 768 MiB-profile files in one call,
/// with 16 decode threads (a many-core machine), stay under 600 MiB peak
/// RSS, and their pixels are still read.
#[test]
#[allow(
    clippy::unwrap_used,
    reason = "test code: a malformed answer should stop the test"
)]
fn png_colour_profiles_stay_inside_the_decode_budget() {
    let ws = crate::support::TempDir::new();
    let names = ["a.png", "b.png", "c.png", "d.png", "e.png", "f.png"];
    let (peak_kib, status, stdout) = read_images_peak(ws.path(), &names, 16);
    assert_eq!(status, 0, "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert!(v["error"].is_null(), "{v}");
    let text = v["output"].as_str().unwrap();
    for name in names {
        assert!(text.contains(&format!("{name} (")), "{text}");
        assert!(text.contains("bytes, 4×4 png)"), "{text}");
    }
    println!(
        "peak RSS of `tool` with six iCCP bombs, 16 threads: {} MiB",
        peak_kib / 1024
    );
    assert!(
        peak_kib < 600 * 1024,
        "peak RSS {} MiB, over 600 MiB",
        peak_kib / 1024
    );
}

/// Review 23 F3: sixteen 35-byte GIFs whose 4×4 screen holds a
/// 65 535×65 535 frame (one took 4 GiB and 94 s before the fix), in one
/// `read_images` call with 16 decode threads, stay far inside the decode
/// budget: each is refused from its frame descriptor.
#[test]
fn gif_frames_larger_than_the_screen_stay_inside_the_decode_budget() {
    const SCRIPT: &str = r#"
import json, os, resource, struct, subprocess, sys
bin_, ws = sys.argv[1], sys.argv[2]
gif = (b"GIF89a" + struct.pack("<HHBBB", 4, 4, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
       + b"\x2c" + struct.pack("<HHHHB", 0, 0, 65535, 65535, 0) + b"\x02\x02\x44\x01\x00\x3b")
assert len(gif) == 35
names = ["g%d.gif" % i for i in range(16)]
for n in names:
    open(os.path.join(ws, n), "wb").write(gif)
env = dict(os.environ, AGENT_TOOLS_DECODE_THREADS="16")
env.pop("TRACE_ID", None)
out = subprocess.run([bin_, "call", "--workspace", ws, "read_images", "--paths=" + json.dumps(names)],
                     env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "stdout": out.stdout.decode()}))
"#;
    let ws = crate::support::TempDir::new();
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT, crate::support::BIN, ws.arg()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let peak_kib = report["peak_kib"].as_u64().unwrap();
    let stdout = report["stdout"].as_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(stdout).expect("JSON");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message
            .matches("a frame of it is 65535×65535 px, more than the 64 megapixels")
            .count(),
        16,
        "{v}"
    );
    println!(
        "peak RSS of `tool` with 16 GIF frame bombs: {} MiB",
        peak_kib / 1024
    );
    assert!(peak_kib < 100 * 1024, "peak RSS {} MiB", peak_kib / 1024);
}
