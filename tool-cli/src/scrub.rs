//! Secret-looking environment variables leave the process at start-up.
//!
//! `bash_command` does not pass variables such as `GITHUB_TOKEN` to the
//! commands it runs, but a command can still read them from this process's
//! own environment block, `/proc/$PPID/environ`. The only way to empty that
//! block without `unsafe` (`std::env::remove_var`) is to start again: when the
//! environment holds a variable matching
//! [`tool_builtins::bash::DEFAULT_SECRET_ENV_PATTERNS`], the program replaces
//! itself (`exec`, same process id, same arguments, same open files) with a
//! copy of itself whose environment lacks them and holds [`MARKER`], so it
//! happens once. It runs first thing in `main`, before any thread exists.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Command;

use tool_builtins::bash::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env_name};

/// Set in the environment of the re-started program. Set it yourself to keep
/// the secret-looking variables (`bash_command` still does not pass them on).
pub(crate) const MARKER: &str = "TOOL_CLI_ENV_SCRUBBED";

/// The names of the secret-looking variables in `vars`.
pub(crate) fn secret_names(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    vars.into_iter()
        .map(|(name, _)| name)
        .filter(|name| is_secret_env_name(name, DEFAULT_SECRET_ENV_PATTERNS))
        .collect()
}

/// Re-starts the program without the secret-looking variables, unless there
/// are none or [`MARKER`] is set. Returns only when nothing had to be done or
/// the re-start failed (said on stderr; the program then goes on as it is).
pub(crate) fn reexec_without_secrets() {
    if std::env::var_os(MARKER).is_some() {
        return;
    }
    let secrets = secret_names(std::env::vars_os());
    if secrets.is_empty() {
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return warn(&e),
    };
    let mut args = std::env::args_os();
    let mut command = Command::new(exe);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    command.args(args).env(MARKER, "1");
    for name in &secrets {
        command.env_remove(name);
    }
    // `exec` returns only on failure.
    let e = command.exec();
    warn(&e);
}

fn warn(e: &std::io::Error) {
    let _ = writeln!(
        std::io::stderr(),
        "warning: could not restart without the secret-looking environment variables ({e}); \
         commands run by bash_command may read them from /proc"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_secret_looking_names() {
        let vars = [
            ("PATH", "/bin"),
            ("FOO_TOKEN", "t"),
            ("GITHUB_PAT", "p"),
            ("DB_PASSWORD", "x"),
            ("HOME", "/root"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        assert_eq!(
            secret_names(vars),
            ["FOO_TOKEN", "GITHUB_PAT", "DB_PASSWORD"].map(OsString::from)
        );
    }
}
