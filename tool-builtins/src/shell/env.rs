//! The environment a command starts with: variables that look like secrets
//! (by name, or by a password in a URL or connection string) are withheld,
//! and the model is told when its command names one.

use std::ffi::{OsStr, OsString};

use super::wildcard::wildcard_match;

#[cfg(doc)]
use super::config::{BashConfig, DEFAULT_SECRET_ENV_PATTERNS};

/// Whether the environment variable `name` matches one of `patterns`
/// (`*` matches any run of characters, `?` one character, ASCII case is
/// ignored; the matcher of command-policy rules), as
/// [`BashConfig::secret_env_patterns`] are matched.
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::shell::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env_name};
///
/// assert!(is_secret_env_name(OsStr::new("GITHUB_TOKEN"), DEFAULT_SECRET_ENV_PATTERNS));
/// assert!(!is_secret_env_name(OsStr::new("PATH"), DEFAULT_SECRET_ENV_PATTERNS));
/// ```
pub fn is_secret_env_name<P: AsRef<str>>(name: &OsStr, patterns: &[P]) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    patterns
        .iter()
        .any(|p| wildcard_match(p.as_ref().to_ascii_uppercase().as_bytes(), name.as_bytes()))
}

/// Splits `vars` into those passed to commands and the names of those
/// withheld as secret-looking ([`is_secret_env`] with `patterns`).
pub(crate) fn split_env(
    vars: Vec<(OsString, OsString)>,
    patterns: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut withheld = Vec::new();
    let kept = vars
        .into_iter()
        .filter(|(name, value)| {
            let secret = is_secret_env(name, value, patterns);
            if secret {
                withheld.push(name.to_string_lossy().into_owned());
            }
            !secret
        })
        .collect();
    (kept, withheld)
}

/// The model-visible note when `command` refers to a withheld variable
/// (`$NAME` or `${NAME`): the command will see it empty, and the model
/// should know why rather than debug an empty value.
pub(super) fn withheld_note(command: &str, withheld: &[String]) -> Option<String> {
    let named: Vec<&str> = withheld
        .iter()
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

/// Whether the variable `name=value` looks like a secret, by the rule the
/// `tool` program also scrubs its own environment with. ASCII case ignored:
/// - its name matches one of `patterns` ([`DEFAULT_SECRET_ENV_PATTERNS`]:
///   `*_KEY`, `*_TOKEN`, `*PASSWORD*`, `*_CREDENTIALS`, ...);
/// - its name contains `CRED` (`CREDENTIALS_JSON`, `GIT_CREDS`);
/// - its name contains `AUTH` (`NPM_AUTH`, `HTTP_AUTHORIZATION`), except in
///   the words `AUTHOR` and `AUTHORS` between underscores, so
///   `GIT_AUTHOR_NAME` stays;
/// - its name holds `CONN` or `DSN` and its value a `Password=` or `Pwd=`
///   (a connection string);
/// - its name is `URL`, `URI` or `DSN` or ends in `_URL`, `_URI` or `_DSN`,
///   and its value is a URL with a password (`scheme://user:password@host`;
///   the user may be empty): `DATABASE_URL=postgres://u:p@h/db` goes,
///   `REPO_URL=ssh://git@github.com/x` stays.
///
/// Not covered: a token as a URL's user without a password
/// (`https://TOKEN@host`), credentials in other values (proxy variables are
/// kept so commands reach the network), secrets in files.
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::shell::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env};
///
/// let secret = |n: &str, v: &str| is_secret_env(OsStr::new(n), OsStr::new(v), DEFAULT_SECRET_ENV_PATTERNS);
/// assert!(secret("DATABASE_URL", "postgres://u:pw@db/app"));
/// assert!(secret("NPM_AUTH", "x") && secret("CREDENTIALS_JSON", "{}"));
/// assert!(!secret("GIT_AUTHOR_NAME", "Ada") && !secret("API_URL", "https://h/a"));
/// ```
pub fn is_secret_env<P: AsRef<str>>(name: &OsStr, value: &OsStr, patterns: &[P]) -> bool {
    if is_secret_env_name(name, patterns) {
        return true;
    }
    let upper = name.to_string_lossy().to_ascii_uppercase();
    if upper.contains("CRED") || has_auth_word(&upper) {
        return true;
    }
    let text = value.to_string_lossy();
    // A connection string with a password (`Server=…;Password=…`).
    if (upper.contains("CONN") || upper.contains("DSN"))
        && (text.to_ascii_lowercase().contains("password=")
            || text.to_ascii_lowercase().contains("pwd="))
    {
        return true;
    }
    is_url_name(&upper) && has_url_password(&text)
}

/// Whether an upper-case name holds `AUTH` other than in the words
/// `AUTHOR`/`AUTHORS` (words are the parts between `_`).
fn has_auth_word(upper: &str) -> bool {
    upper
        .split('_')
        .any(|word| word.contains("AUTH") && word != "AUTHOR" && word != "AUTHORS")
}

fn is_url_name(upper: &str) -> bool {
    ["_URL", "_URI", "_DSN"]
        .iter()
        .any(|suffix| upper.ends_with(suffix) || upper == &suffix[1..])
}

/// Whether `value` is `scheme://[user]:password@...`: the authority (from
/// `://` to the first `/`, `?` or `#`) has user info (before its last `@`)
/// holding a `:`.
fn has_url_password(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if scheme.is_empty() {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'))
}
