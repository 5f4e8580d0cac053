//! The environment a command starts with: variables that look like secrets
//! (by name, or by a password in a URL or connection string) are withheld,
//! and the model is told when its command names one.

use std::ffi::{OsStr, OsString};

use tool_core::governance::secret_env;

use super::wildcard::wildcard_match;

#[cfg(doc)]
use super::config::{BashConfig, DEFAULT_SECRET_ENV_PATTERNS};

/// Whether the environment variable `name` looks like a secret's: the
/// built-in name rule every child's environment is scrubbed by
/// ([`tool_core::governance::secret_env::is_secret_env_name`]: secret words
/// as name segments anywhere, with version, encoding and plural suffixes),
/// or one of `patterns` matches it (`*` matches any run of characters, `?`
/// one character, ASCII case is ignored; the matcher of command-policy
/// rules), as [`BashConfig::secret_env_patterns`] are matched.
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::shell::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env_name};
///
/// assert!(is_secret_env_name(OsStr::new("GITHUB_TOKEN_2"), DEFAULT_SECRET_ENV_PATTERNS));
/// assert!(is_secret_env_name(OsStr::new("CORP_VAULT"), &["corp_*"]));
/// assert!(!is_secret_env_name(OsStr::new("PATH"), DEFAULT_SECRET_ENV_PATTERNS));
/// ```
pub fn is_secret_env_name<P: AsRef<str>>(name: &OsStr, patterns: &[P]) -> bool {
    let name = name.to_string_lossy();
    if secret_env::is_secret_env_name(&name) {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    patterns
        .iter()
        .any(|p| wildcard_match(p.as_ref().to_ascii_uppercase().as_bytes(), upper.as_bytes()))
}

/// Variables passed to a command, `(name, value)`.
pub(crate) type EnvVars = Vec<(OsString, OsString)>;
/// Variables withheld from a command, `(name, value)`.
pub(crate) type Withheld = Vec<(String, OsString)>;

/// Splits `vars` into those passed to commands and the withheld
/// secret-looking ones, `(name, value)` ([`is_secret_env`] with `patterns`):
/// their names go into the model's note, their values to the output masker.
pub(crate) fn split_env(
    vars: Vec<(OsString, OsString)>,
    patterns: &[String],
) -> (EnvVars, Withheld) {
    let mut withheld = Vec::new();
    let mut kept = Vec::new();
    for (name, value) in vars {
        if is_secret_env(&name, &value, patterns) {
            withheld.push((name.to_string_lossy().into_owned(), value));
        } else {
            kept.push((name, value));
        }
    }
    (kept, withheld)
}

/// The model-visible note when `command` refers to a withheld variable
/// (`$NAME` or `${NAME`): the command will see it empty, and the model
/// should know why rather than debug an empty value.
pub(super) fn withheld_note(command: &str, withheld: &[(String, OsString)]) -> Option<String> {
    let named: Vec<&str> = withheld
        .iter()
        .map(|(n, _)| n)
        .filter(|n| {
            let plain = format!("${n}");
            let braced = format!("${{{n}");
            command.match_indices(&plain).any(|(i, m)| {
                !command[i + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            }) || command.contains(&braced)
        })
        .map(String::as_str)
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "{} {} not passed to the command (secret-looking variables are withheld); \
             it is empty there. Use a secret placeholder if the command needs the value.",
            named.join(", "),
            if named.len() == 1 { "was" } else { "were" }
        )
    })
}

/// Whether the variable `name=value` looks like a secret: the one rule
/// of [`tool_core::governance::secret_env`] (by name: secret words as name
/// segments anywhere, `GITHUB_TOKEN_2`, `MASTER_KEY_B64`, `OTP_SEED`; by
/// value: credentials in any URL, `Password=` fields, well-known token
/// formats), or a name matching one of `patterns`
/// ([`BashConfig::secret_env_patterns`]; none by default,
/// [`DEFAULT_SECRET_ENV_PATTERNS`]).
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::shell::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env};
///
/// let secret = |n: &str, v: &str| is_secret_env(OsStr::new(n), OsStr::new(v), DEFAULT_SECRET_ENV_PATTERNS);
/// assert!(secret("DATABASE_URL", "postgres://u:pw@db/app"));
/// assert!(secret("HTTPS_PROXY", "http://u:pw@proxy:3128"));
/// assert!(secret("NPM_AUTH", "x") && secret("CREDENTIALS_JSON", "{}") && secret("SECRET_V2", "x"));
/// assert!(!secret("GIT_AUTHOR_NAME", "Ada") && !secret("API_URL", "https://h/a"));
/// ```
pub fn is_secret_env<P: AsRef<str>>(name: &OsStr, value: &OsStr, patterns: &[P]) -> bool {
    secret_env::is_secret_env_value(value) || is_secret_env_name(name, patterns)
}
