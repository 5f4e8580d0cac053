//! Which environment variables look like secrets: the one rule every place
//! that hands an environment to a child process applies
//! (`../shared/design/cross-cutting.md` §7): `bash_command`'s commands, the
//! stdio MCP servers `tool-mcp` starts, and the sandbox.
//!
//! The host process keeps its own environment (so configured keys such as
//! MCP `headers` with `${VAR}` or a search provider's key still resolve);
//! what it starts gets [`scrub_env`]'s result instead of the inherited
//! environment, plus whatever its configuration passes on purpose.
//!
//! ```
//! use std::ffi::OsStr;
//! use tool_core::governance::secret_env::{is_secret_env, is_secret_env_name, scrub_env};
//!
//! assert!(is_secret_env_name("GITHUB_TOKEN_2") && is_secret_env_name("MASTER_KEY_B64"));
//! assert!(!is_secret_env_name("KEYBOARD_LAYOUT") && !is_secret_env_name("PWD"));
//! assert!(is_secret_env(OsStr::new("PIP_INDEX"), OsStr::new("https://u:pw@pypi.corp/simple")));
//!
//! let (kept, withheld) = scrub_env([("PATH", "/bin"), ("OTP_SEED", "JBSWY3DP")]);
//! assert_eq!(kept.len(), 1);
//! assert_eq!(withheld, ["OTP_SEED"]);
//! ```
//!
//! # The rule
//!
//! A variable is secret-looking when its **name** or its **value** says so
//! (ASCII case ignored throughout).
//!
//! **Names.** The name is cut into segments at every character that is not
//! an ASCII letter or digit (`_`, `-`, `.`) and where a lower-case letter is
//! followed by an upper-case one (`authToken` → `auth`, `Token`). A segment
//! names a secret when, after taking off any run of suffixes from
//! [`SECRET_NAME_SUFFIXES`] (plural `S`, a version `V2` or `2`, an encoding
//! `B64`, `BASE64`, `HEX`, `JSON`, `PEM`), what is left
//! - is one of [`SECRET_NAME_WORDS`] (`KEY`, `TOKEN`, `SECRET`, `PAT`, `PW`,
//!   `JWT`, `OTP`, ...), wherever the segment stands in the name: `KEY_ID`,
//!   `GITHUB_TOKEN_2`, `SECRET_V2`, `MASTER_KEY_B64`, `GCP_SA_KEY_JSON`,
//!   `CI_JOB_JWT_V2`, `MYSQL_ROOT_PW`, `OTP_SEED`;
//! - or ends in one of [`SECRET_NAME_ENDINGS`] glued to other letters
//!   (`GHTOKEN`, `CLIENTSECRET`, `NPMTOKENS`);
//! - or holds `AUTH` (`OAUTH`, `AUTHORIZATION`, `NPM_AUTH`) and is not
//!   `AUTHOR` or `AUTHORS`, so git's `GIT_AUTHOR_NAME` stays.
//!
//! Besides, a name holding one of [`SECRET_NAME_PARTS`] anywhere is
//! secret-looking (`PGPASSWORD`, `OPENAI_APIKEY`, `SLACK_WEBHOOK_URL`,
//! `GOOGLE_APPLICATION_CREDENTIALS`). `PWD` alone is the shell's working
//! folder, not a password: a name that is only `PWD` (or `OLDPWD`) stays, and
//! `DB_PWD` goes. A plural `TOKENS` beside `MAX`, `MIN`, `NUM`, `COUNT`,
//! `LIMIT` or `BUDGET` counts text tokens (`MAX_TOKENS` stays). So `KEYBOARD_LAYOUT`, `TOKENIZERS_PARALLELISM`, `PATH`,
//! `HOME`, `CARGO_HOME`, `SECRETARY` and `MONKEY` stay.
//!
//! **Values** ([`is_secret_env_value`]), whatever the name:
//! - a URL with credentials anywhere in the value: `scheme://user:password@host`
//!   (the user may be empty), and `scheme://USER@host` where the user looks
//!   like a token (at least 20 characters of letters, digits, `_` and `-`,
//!   holding both letters and digits), as `https://ghp_…@github.com`; a short
//!   user such as `git@` or `deploy@` is kept. Each `://` of the value is read,
//!   the scheme is the run of letters, digits, `+`, `-`, `.` before it, and
//!   the URL runs to the next white space, quote, `,` or `;`; it is parsed
//!   with the `url` crate (WHATWG URL: the user info ends at the last `@` of
//!   the authority). So proxy settings with a password
//!   (`HTTPS_PROXY=http://u:p@proxy:3128`) are withheld too;
//! - a connection-string or query field carrying a credential: `password=`,
//!   `pwd=`, `passwd=`, `AccountKey=`, `SharedAccessKey=`,
//!   `SharedAccessSignature=`, `access_token=`, `sig=` at the start of the
//!   value or after `;`, `&`, `?` or white space
//!   (`Server=db;User Id=u;Password=p`, `host=h password=p`);
//! - a value that starts with a well-known token prefix ([`TOKEN_PREFIXES`]:
//!   GitHub's `ghp_`, `github_pat_`, GitLab's `glpat-`, Slack's `xoxb-`,
//!   AWS key ids `AKIA`, ...) followed by at least 16 token characters, or
//!   that holds a PEM private key (`-----BEGIN … PRIVATE KEY-----`).
//!
//! Values are read up to their first [`MAX_VALUE_SCAN`] bytes (a longer
//! value is judged by that much; of its URLs, the first [`MAX_URLS`]),
//! non-UTF-8 bytes as replacement characters.
//!
//! Not covered: secrets under names and in values that follow none of these
//! shapes (`MY_THING=hunter2`), and secrets in files the environment points
//! to. Hosts add their own names with `BashConfig::secret_env_patterns`
//! (tool-builtins) or by passing a narrower environment.

use std::ffi::{OsStr, OsString};

/// Secret words matched as whole name segments (after [`SECRET_NAME_SUFFIXES`]
/// are taken off), wherever the segment stands in the name.
pub const SECRET_NAME_WORDS: &[&str] = &[
    "KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PAT",
    "PASS",
    "PASSWD",
    "PASSWORD",
    "PW",
    "PWD",
    "JWT",
    "CRED",
    "CREDENTIAL",
    "OTP",
    "TOTP",
    "HOTP",
    "MFA",
    "BEARER",
    "MNEMONIC",
    "PASSPHRASE",
    "COOKIE",
];

/// Secret words matched at the end of a segment even when glued to other
/// letters (`GHTOKEN`, `CLIENTSECRET`, `APPPASSWORD`); `KEY` is not one of
/// them (`MONKEY`, `HOTKEY`).
pub const SECRET_NAME_ENDINGS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY"];

/// Text that makes a name secret-looking wherever it appears, separators
/// included (upper case).
pub const SECRET_NAME_PARTS: &[&str] = &[
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "APIKEY",
    "API_KEY",
    "PRIVATE_KEY",
    "PRIVATEKEY",
    "WEBHOOK",
    "COOKIE",
    "CREDENTIAL",
];

/// Suffixes taken off the end of a name segment, in any number and order,
/// before it is compared with [`SECRET_NAME_WORDS`]: a plural `S`, a version
/// (`V` and digits, or digits alone) and encodings. The whole name segments
/// `B64`, `JSON`, `V2`, `2` are no secret words themselves, so
/// `MASTER_KEY_B64` is caught through its `KEY` segment.
pub const SECRET_NAME_SUFFIXES: &[&str] = &["BASE64", "B64", "HEX", "JSON", "PEM", "S"];

/// Value prefixes of well-known token formats (as their issuers document
/// them: GitHub's `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, GitLab's
/// `glpat-`, Slack's `xoxb-`/`xoxp-`/`xoxa-`/`xapp-`, Anthropic's `sk-ant-`,
/// `OpenAI`'s `sk-proj-`, npm's `npm_`, the Python Package Index's `pypi-`, Hugging Face's `hf_`,
/// AWS access key ids `AKIA`/`ASIA`). A value counts when it starts with one
/// and at least 16 letters, digits, `_` or `-` follow.
pub const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "sk-ant-",
    "sk-proj-",
    "npm_",
    "pypi-",
    "hf_",
    "AKIA",
    "ASIA",
];

/// Bytes of a value read by [`is_secret_env_value`]: 64 KiB.
pub const MAX_VALUE_SCAN: usize = 64 * 1024;

/// Shortest value of a withheld variable that is masked in a command's
/// output (`tool_core::truncate::StreamMasker::for_context_and_env`): 8
/// characters. Shorter values (`1`, `true`, `/tmp`) would mask common text.
pub const MIN_MASKED_ENV_LEN: usize = 8;

/// URLs of one value parsed by [`is_secret_env_value`]: the first 64 (each
/// parse reads up to the end of its URL, so the work stays linear).
pub const MAX_URLS: usize = 64;

/// Fields of a connection string or URL query that carry a credential
/// (lower case, with their `=`).
const CREDENTIAL_FIELDS: &[&str] = &[
    "password=",
    "pwd=",
    "passwd=",
    "accountkey=",
    "sharedaccesskey=",
    "sharedaccesssignature=",
    "access_token=",
    "sig=",
];

/// Whether the variable `name=value` looks like a secret: its name
/// ([`is_secret_env_name`]) or its value ([`is_secret_env_value`]) says so.
/// The rule is in the [module docs](self).
pub fn is_secret_env(name: &OsStr, value: &OsStr) -> bool {
    is_secret_env_name(&name.to_string_lossy()) || is_secret_env_value(value)
}

/// Whether an environment variable's name looks like a secret's (the name
/// rule of the [module docs](self)): `GITHUB_TOKEN_2`, `SECRET_V2`,
/// `MASTER_KEY_B64`, `GCP_SA_KEY_JSON`, `CI_JOB_JWT_V2`, `MYSQL_ROOT_PW`,
/// `OTP_SEED` do; `KEYBOARD_LAYOUT`, `TOKENIZERS_PARALLELISM`, `PWD`,
/// `OLDPWD`, `HOME`, `CARGO_HOME` do not.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD") {
        return false;
    }
    if SECRET_NAME_PARTS.iter().any(|part| upper.contains(part)) {
        return true;
    }
    let segments = segments(name);
    // `MAX_TOKENS`, `NUM_TOKENS`: a count of text tokens, not credentials.
    let counts = segments
        .iter()
        .any(|s| COUNTING_WORDS.contains(&s.as_str()));
    segments
        .iter()
        .any(|segment| !(counts && segment == "TOKENS") && secret_segment(segment))
}

/// Segments that make a plural `TOKENS` a count of text tokens
/// (`MAX_TOKENS`, `NUM_TOKENS`, `TOKENS_LIMIT`).
const COUNTING_WORDS: &[&str] = &["MAX", "MIN", "NUM", "COUNT", "LIMIT", "BUDGET"];

/// Whether an environment variable's value carries a credential (the value
/// rule of the [module docs](self)): a URL with a password or a token as its
/// user, a connection string's `Password=`, a well-known token format, a PEM
/// private key. Reads at most [`MAX_VALUE_SCAN`] bytes.
pub fn is_secret_env_value(value: &OsStr) -> bool {
    let bytes = value.as_encoded_bytes();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_VALUE_SCAN)]);
    has_url_credentials(&text)
        || has_credential_field(&text)
        || has_token_prefix(&text)
        || (text.contains("-----BEGIN") && text.contains("PRIVATE KEY-----"))
}

/// Splits `vars` into those a child process may see and the names of the
/// secret-looking ones ([`is_secret_env`]), in their order. A child started
/// with the first list (after `env_clear`) sees no secret-looking variable
/// of its parent; add what its configuration passes on purpose afterwards.
/// To mask the withheld values in the child's output, keep them
/// ([`is_secret_env`] on each) and give them to
/// `tool_core::truncate::StreamMasker::for_context_and_env`.
pub fn scrub_env<K, V>(
    vars: impl IntoIterator<Item = (K, V)>,
) -> (Vec<(OsString, OsString)>, Vec<String>)
where
    K: Into<OsString>,
    V: Into<OsString>,
{
    let mut withheld = Vec::new();
    let mut kept = Vec::new();
    for (name, value) in vars {
        let (name, value) = (name.into(), value.into());
        if is_secret_env(&name, &value) {
            withheld.push(name.to_string_lossy().into_owned());
        } else {
            kept.push((name, value));
        }
    }
    (kept, withheld)
}

/// The name's segments, upper case: cut at every byte that is not an ASCII
/// letter or digit, and between a lower-case letter and an upper-case one.
fn segments(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if previous_lower && c.is_ascii_uppercase() && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_ascii_lowercase();
        current.push(c.to_ascii_uppercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Whether one upper-case segment names a secret: the segment or what is
/// left of it after suffixes are taken off is a secret word, ends in a
/// secret ending, or holds `AUTH` other than as `AUTHOR(S)`.
fn secret_segment(segment: &str) -> bool {
    if segment.contains("AUTH") && segment != "AUTHOR" && segment != "AUTHORS" {
        return true;
    }
    // Every stem reachable by taking suffixes off the end (a handful: the
    // segment shrinks with each step).
    let mut stems = vec![segment];
    let mut i = 0;
    while let Some(&stem) = stems.get(i) {
        i += 1;
        if SECRET_NAME_WORDS.contains(&stem)
            || SECRET_NAME_ENDINGS.iter().any(|e| stem.ends_with(e))
        {
            return true;
        }
        for next in without_suffix(stem) {
            if !next.is_empty() && !stems.contains(&next) {
                stems.push(next);
            }
        }
    }
    false
}

/// `stem` with one suffix taken off, in each way one can be.
fn without_suffix(stem: &str) -> Vec<&str> {
    let mut out: Vec<&str> = SECRET_NAME_SUFFIXES
        .iter()
        .filter_map(|s| stem.strip_suffix(s))
        .collect();
    // A version: trailing digits, optionally after a `V`.
    let digits = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    if digits.len() < stem.len() {
        out.push(digits);
        if let Some(v) = digits.strip_suffix('V') {
            out.push(v);
        }
    }
    out
}

/// Whether some `scheme://…` in `text` has a password, or a token as its user.
/// At most [`MAX_URLS`] URLs of a value are parsed.
fn has_url_credentials(text: &str) -> bool {
    let mut from = 0;
    let mut parsed = 0;
    while let Some(at) = text[from..].find("://").map(|i| from + i) {
        parsed += 1;
        if parsed > MAX_URLS {
            return false;
        }
        let start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let end = text[at..]
            .find(|c: char| c.is_whitespace() || "\"'`,;<>".contains(c))
            .map_or(text.len(), |i| at + i);
        from = at + 3;
        if start == at {
            continue;
        }
        let Ok(url) = url::Url::parse(&text[start..end]) else {
            continue;
        };
        if url.password().is_some() || looks_like_token(url.username()) {
            return true;
        }
    }
    false
}

/// A URL user that is a token rather than a login name.
fn looks_like_token(user: &str) -> bool {
    user.len() >= 20
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && user.bytes().any(|b| b.is_ascii_digit())
        && user.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a credential field (`password=`, ...) opens the value or follows
/// `;`, `&`, `?` or white space.
fn has_credential_field(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    CREDENTIAL_FIELDS.iter().any(|field| {
        lower.match_indices(field).any(|(i, _)| {
            lower[..i]
                .chars()
                .next_back()
                .is_none_or(|c| c.is_whitespace() || ";&?".contains(c))
        })
    })
}

/// Whether the value is a well-known token: a prefix of [`TOKEN_PREFIXES`]
/// and at least 16 token characters after it.
fn has_token_prefix(text: &str) -> bool {
    let text = text.trim();
    TOKEN_PREFIXES.iter().any(|prefix| {
        text.strip_prefix(prefix).is_some_and(|rest| {
            rest.len() >= 16
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
    })
}

/// What [`mask_secret_text`] puts in place of a secret-looking value.
pub const MASKED: &str = "<masked>";

/// `text` with secret-looking values replaced by [`MASKED`], for text sent
/// beyond the process (a reviewer model's slice of the conversation): each
/// whitespace-separated word that carries a credential
/// ([`is_secret_env_value`]: a URL with a password, a token format, a
/// connection string's password), the value of `NAME=value` or `NAME: value`
/// when `NAME` looks like a secret's name ([`is_secret_env_name`], quotes
/// around it ignored), and the word after such a `NAME:` or `"NAME":`. A PEM
/// private key block is replaced whole. Best effort by design: it masks what
/// looks like a secret, it cannot know every secret. Values from a
/// [`SecretStore`](crate::SecretStore) are masked by the pipeline in tool
/// results only; for other text (a conversation a user typed a stored
/// value into) use [`SecretStore::mask_text`](crate::SecretStore::mask_text) as well.
pub fn mask_secret_text(text: &str) -> String {
    let text = mask_pem_blocks(text);
    let mut out = String::with_capacity(text.len());
    let mut mask_next = false;
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if word.is_empty() {
            continue;
        }
        if mask_next {
            mask_next = false;
            out.push_str(MASKED);
            continue;
        }
        let bare = |s: &str| -> String {
            s.trim_matches(|c: char| matches!(c, '"' | '\'' | '{' | ',' | '-'))
                .to_owned()
        };
        if let Some(p) = word.find(['=', ':']) {
            let (name, value) = (bare(&word[..p]), &word[p + 1..]);
            if is_secret_env_name(&name) && !name.is_empty() {
                if value
                    .trim_matches(|c: char| matches!(c, '"' | '\'' | ','))
                    .is_empty()
                {
                    out.push_str(word);
                    mask_next = true;
                } else {
                    out.push_str(&word[..=p]);
                    out.push_str(MASKED);
                }
                continue;
            }
        }
        if is_secret_env_value(OsStr::new(word)) {
            out.push_str(MASKED);
        } else {
            out.push_str(word);
        }
    }
    out
}

/// `text` with every PEM private key block replaced by [`MASKED`].
fn mask_pem_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(begin) = rest.find("-----BEGIN") {
        let Some(end_marker) = rest[begin..].find("PRIVATE KEY-----") else {
            break;
        };
        let header_end = begin + end_marker + "PRIVATE KEY-----".len();
        let block_end = rest[header_end..]
            .find("-----END")
            .and_then(|e| {
                let from = header_end + e;
                rest[from..]
                    .find("PRIVATE KEY-----")
                    .map(|k| from + k + "PRIVATE KEY-----".len())
            })
            .unwrap_or(rest.len());
        out.push_str(&rest[..begin]);
        out.push_str(MASKED);
        rest = &rest[block_end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cut_at_separators_and_camel_humps() {
        assert_eq!(
            segments("npm_config__authToken"),
            ["NPM", "CONFIG", "AUTH", "TOKEN"]
        );
        assert_eq!(segments("GCP-SA.KEY_JSON"), ["GCP", "SA", "KEY", "JSON"]);
        assert_eq!(segments("HTTPProxy"), ["HTTPPROXY"]);
    }

    #[test]
    fn suffixes_come_off_in_any_order() {
        for segment in [
            "TOKENS",
            "TOKEN2",
            "TOKENV2",
            "KEYB64",
            "KEYSJSON",
            "SECRETV10HEX",
        ] {
            assert!(secret_segment(segment), "{segment}");
        }
        for segment in [
            "TOKENIZERS",
            "KEYBOARD",
            "MONKEY",
            "SECRETARY",
            "PASSENGER",
            "V2",
            "B64",
        ] {
            assert!(!secret_segment(segment), "{segment}");
        }
    }

    #[test]
    fn secret_looking_words_are_masked_in_text() {
        let text = "run with GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 and\n\
                    {\"api_key\": \"k-123\", \"max_tokens\": 5} at https://ana:pw@db.example.com/x \
                    -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done";
        assert_eq!(
            mask_secret_text(text),
            "run with GITHUB_TOKEN=<masked> and\n\
             {\"api_key\": <masked> \"max_tokens\": 5} at <masked> <masked> done"
        );
        assert_eq!(mask_secret_text("plain words stay"), "plain words stay");
    }
}
