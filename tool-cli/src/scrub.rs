//! Secret-looking environment variables leave the process at start-up.
//!
//! `bash_command` does not pass variables such as `GITHUB_TOKEN` to the
//! commands it runs, but a command can still read them from this process's
//! own environment block, `/proc/$PPID/environ`. The only way to empty that
//! block without `unsafe` (`std::env::remove_var`) is to start again: when the
//! environment holds a secret-looking variable (below), the program replaces
//! itself (`exec`, same process id, same arguments, same open files) with a
//! copy of itself whose environment lacks them and holds [`MARKER`], so it
//! happens once. It runs first thing in `main`, before any thread exists.
//!
//! A variable is secret-looking when `bash_command` would withhold it
//! (`tool_builtins::shell::is_secret_env`, one rule for both), ASCII case ignored:
//! - its name matches [`tool_builtins::shell::DEFAULT_SECRET_ENV_PATTERNS`]
//!   (`*_KEY`, `*_TOKEN`, `*PASSWORD*`, `*_CREDENTIALS`, ...);
//! - its name contains `CRED` (`CREDENTIALS_JSON`, `GIT_CREDS`);
//! - its name contains `AUTH` (`NPM_AUTH`, `OAUTH_CLIENT_SECRET`,
//!   `HTTP_AUTHORIZATION`), except in the words `AUTHOR` and `AUTHORS`
//!   between underscores, so git's `GIT_AUTHOR_NAME` and `GIT_AUTHOR_EMAIL`
//!   stay and commits keep their author;
//! - its name is `URL`, `URI` or `DSN` or ends in `_URL`, `_URI` or `_DSN`,
//!   and its value is a URL with a password: `scheme://user:password@host...`
//!   (the user may be empty, `redis://:password@host`). The user info is
//!   what precedes the last `@` of the authority, and the authority runs from
//!   `://` to the first `/`, `?` or `#`, as URL parsers read it; so
//!   `DATABASE_URL=postgres://u:p@h/db` goes, while `API_URL=https://h/a@b`,
//!   `REPO_URL=ssh://git@github.com/x` (a user, no password) and
//!   `PROXY_URL=http://proxy:3128` stay. A value that is not UTF-8 is read
//!   with replacement characters, which changes no `:`, `@` or `/`.
//!
//! Not covered: a token given as a URL's user without a password
//! (`https://TOKEN@host`), credentials in other variables' values (such as
//! `HTTPS_PROXY=http://user:password@proxy`, kept so commands still reach
//! the network), and secrets in files the environment points to.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Command;

use tool_builtins::shell::DEFAULT_SECRET_ENV_PATTERNS;

/// Set in the environment of the re-started program. Set it yourself to keep
/// the secret-looking variables (`bash_command` still does not pass on the
/// ones matching its own patterns).
pub(crate) const MARKER: &str = "TOOL_CLI_ENV_SCRUBBED";

/// The names of the secret-looking variables in `vars` (rules in the module docs).
pub(crate) fn secret_names(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    vars.into_iter()
        .filter(|(name, value)| is_secret_env(name, value))
        .map(|(name, _)| name)
        .collect()
}

/// Whether the variable `name=value` looks like a secret: the rule
/// `bash_command` withholds variables by ([`tool_builtins::shell::is_secret_env`]).
pub(crate) fn is_secret_env(name: &OsStr, value: &OsStr) -> bool {
    tool_builtins::shell::is_secret_env(name, value, DEFAULT_SECRET_ENV_PATTERNS)
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

    fn names(vars: &[(&str, &str)]) -> Vec<OsString> {
        secret_names(
            vars.iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        )
    }

    #[test]
    fn finds_the_secret_looking_names() {
        let vars = [
            ("PATH", "/bin"),
            ("FOO_TOKEN", "t"),
            ("GITHUB_PAT", "p"),
            ("DB_PASSWORD", "x"),
            ("HOME", "/root"),
        ];
        assert_eq!(
            names(&vars),
            ["FOO_TOKEN", "GITHUB_PAT", "DB_PASSWORD"].map(OsString::from)
        );
    }

    #[test]
    fn urls_with_passwords_and_auth_or_cred_names_are_scrubbed() {
        let scrubbed = [
            // The issue's three.
            ("DATABASE_URL", "postgres://u:p@h/db"),
            ("NPM_AUTH", "npm-auth-value"),
            ("CREDENTIALS_JSON", r#"{"k": "v"}"#),
            // Three more of the same kinds.
            ("REDIS_URL", "redis://:only-a-password@cache:6379/0"),
            (
                "MONGODB_URI",
                "mongodb+srv://app:pw@cluster0.example.net/?retryWrites=true",
            ),
            ("docker_auth_config", r#"{"auths": {}}"#),
            // And a few more: a name that is just `URL`, a DSN, OAuth, creds.
            ("URL", "https://user:pw@example.com"),
            ("SENTRY_DSN", "https://key:secret@o1.ingest.sentry.io/2"),
            ("OAUTH_CLIENT_ID", "id"),
            ("HTTP_AUTHORIZATION", "Basic dTpw"),
            ("GIT_CREDS", "x"),
            // `@` in the password: the last `@` of the authority ends the user info.
            ("AMQP_URL", "amqp://guest:p@ss@rabbit:5672/"),
        ];
        for (name, value) in scrubbed {
            assert_eq!(
                names(&[(name, value)]),
                [OsString::from(name)],
                "{name}={value} should be scrubbed"
            );
        }
    }

    #[test]
    fn urls_without_passwords_and_author_names_are_kept() {
        let kept = [
            ("DATABASE_URL", "postgres://h/db"),
            ("API_URL", "https://api.example.com/v1"),
            ("PROXY_URL", "http://proxy.internal:3128"),
            ("REPO_URL", "ssh://git@github.com/org/repo.git"),
            // `@` and `:` after the authority are path, query and fragment.
            ("DOCS_URL", "https://docs.example.com/a:b@c"),
            ("SEARCH_URL", "https://example.com/?q=a:b@c"),
            ("PAGE_URL", "https://example.com#x:y@z"),
            // Not a URL-named variable, even with a password in it.
            ("HTTPS_PROXY", "http://user:pw@proxy:3128"),
            ("CURL", "https://u:p@h"),
            // A URL-named variable whose value is no URL.
            ("NOT_A_URL", "u:p@h"),
            ("GIT_AUTHOR_NAME", "A. Person"),
            ("GIT_AUTHOR_EMAIL", "a@example.com"),
            ("AUTHORS", "a, b"),
        ];
        for (name, value) in kept {
            assert!(
                names(&[(name, value)]).is_empty(),
                "{name}={value} should be kept"
            );
        }
    }
}
