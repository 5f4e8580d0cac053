//! Sensitive data: `<secret>key</secret>` placeholders in arguments, replaced
//! just before the call and masked again in everything the call returns.
//!
//! The model only ever sees and writes placeholders; the real values exist
//! in memory during the call. Keys ending in [`TOTP_SUFFIX`] hold a base32
//! TOTP seed and are replaced by the current RFC 6238 code (6 digits, 30 s
//! steps, HMAC-SHA-1: the parameters every authenticator app uses).
//!
//! # What masking covers
//!
//! After a call, every occurrence of a secret in the result is replaced by
//! its placeholder `<secret>key</secret>`. The values looked for are every
//! value in the store (whether or not the call used it, and whatever page it
//! is scoped to) and the TOTP codes the call was given. Each is looked for in
//! these forms, exactly as written (byte for byte, case included):
//! - the value itself;
//! - JSON-string-escaped (as inside a JSON string: `"` as `\"`, a newline
//!   as `\n`) and Rust-`Debug`-escaped (as `{:?}` prints it);
//! - standalone base64 of its UTF-8 bytes, in the standard alphabet (`+/`)
//!   and the URL-safe one (`-_`), each with and without `=` padding;
//! - standalone hex of its bytes, all lower case or all upper case;
//! - percent-encoded as `application/x-www-form-urlencoded` does it
//!   (upper-case `%XX` for every byte but ASCII letters, digits and `*-._`),
//!   with a space as `+` or as `%20`.
//!
//! "Standalone" means the encoding of the value alone. Base64 turns 3 bytes
//! into 4 characters, so inside a larger encoded blob (`Authorization: Basic
//! base64("user:password")`) a value's characters depend on where it starts
//! and on its neighbours, and the standalone encoding does not occur there:
//! such a blob is not masked (store the whole `user:password` as a secret to
//! have it masked). Hex has no such alignment, but only the two cases above.
//!
//! The places looked in: the output, title, long-term memory, error message,
//! attachment names and paths, and every string and object key of the
//! metadata at any depth; also the messages of argument errors (before the
//! value sent is quoted and cut) and of contained panics.
//!
//! Not covered: a value the program changed in any other way (another
//! encoding such as base32 or mixed-case hex, compression, encryption or
//! hashing, upper- or lower-casing, reversing, splitting across lines or
//! across two strings of the result, base64 or percent-encoding inside a
//! larger encoded blob, a part of the value such as a prefix cut by the
//! tool itself); bytes of images and inline attachments; and anything the
//! tool sends elsewhere itself (files, network, logs). Masking is a safety
//! net for values a tool echoes, not a guarantee that a tool cannot leak.
//!
//! A value shorter than [`MIN_SECRET_LEN`] characters is refused when the
//! store is built ([`SecretStoreError::TooShort`]): masking `abc` would
//! replace it inside every word that contains it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};

use super::url_pattern::{UrlPattern, UrlPatternError};
use crate::result::ToolResult;

/// Keys ending in this suffix hold a base32 TOTP seed (RFC 6238).
pub const TOTP_SUFFIX: &str = "_bu_2fa_code";

const OPEN: &str = "<secret>";
const CLOSE: &str = "</secret>";

/// The shortest secret value accepted, in characters (Unicode scalar values):
/// 4. A store with a shorter value is refused ([`SecretStoreError::TooShort`]),
/// since masking it would replace it inside every word that contains it.
pub const MIN_SECRET_LEN: usize = 4;

/// Secret values by key: global ones, and groups limited to pages whose URL
/// matches a pattern (same matcher as `url_patterns`).
///
/// `Debug` prints keys, never values.
///
/// ```
/// use tool_core::SecretStore;
/// use serde_json::json;
///
/// let store = SecretStore::from_json(&json!({
///     "api_key": "sk-123",
///     "*.github.com": {"github_token": "ghp_abc", "github_2fa_bu_2fa_code": "JBSWY3DPEHPK3PXP"}
/// })).unwrap();
/// assert_eq!(store.keys_for(Some("https://api.github.com/x")), ["api_key", "github_2fa_bu_2fa_code", "github_token"]);
/// assert_eq!(store.keys_for(Some("https://example.com")), ["api_key"]);
/// ```
#[derive(Clone, Default)]
pub struct SecretStore {
    global: BTreeMap<String, String>,
    scoped: Vec<(UrlPattern, BTreeMap<String, String>)>,
    /// The masker for the stored values, built on first use (the store is
    /// immutable once shared through a context).
    base_masker: OnceLock<Arc<Masker>>,
}

/// Why a secret store could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretStoreError {
    /// A domain group's key is not a valid URL pattern.
    #[error(transparent)]
    Pattern(#[from] UrlPatternError),
    /// A value is neither a string nor (for a pattern key) an object of strings.
    #[error(
        "secret store entry {0:?} must be a string, or an object of strings under a URL pattern"
    )]
    Shape(String),
    /// A TOTP seed is not valid base32.
    #[error("secret {0:?} ends in `_bu_2fa_code` but its value is not a base32 TOTP seed")]
    Totp(String),
    /// A value is shorter than [`MIN_SECRET_LEN`] characters.
    #[error(
        "secret {key:?} is {len} characters long, shorter than the minimum of {MIN_SECRET_LEN} \
         (MIN_SECRET_LEN): masking so short a value would replace it inside every word that \
         contains it; use a longer value"
    )]
    TooShort {
        /// The key, as written in the store.
        key: String,
        /// The value's length in characters.
        len: usize,
    },
}

/// Why a placeholder could not be replaced. Never contains a secret value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretError {
    pub(crate) message: String,
}

impl SecretStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a store from JSON: `{"key": "value", "<url pattern>": {"key": "value"}}`.
    ///
    /// # Errors
    /// [`SecretStoreError`] for bad patterns, values that are not strings,
    /// values shorter than [`MIN_SECRET_LEN`] characters, and TOTP seeds that
    /// are not base32.
    pub fn from_json(value: &Value) -> Result<Self, SecretStoreError> {
        let Value::Object(map) = value else {
            return Err(SecretStoreError::Shape("<root>".to_owned()));
        };
        let mut store = Self::new();
        for (key, v) in map {
            match v {
                Value::String(s) => store = store.with_secret(key.clone(), s.clone())?,
                Value::Object(group) => {
                    let pattern = UrlPattern::parse(key)?;
                    let mut values = BTreeMap::new();
                    for (k, v) in group {
                        let Value::String(s) = v else {
                            return Err(SecretStoreError::Shape(format!("{key}.{k}")));
                        };
                        check_value(k, s)?;
                        values.insert(k.clone(), s.clone());
                    }
                    store.scoped.push((pattern, values));
                }
                _ => return Err(SecretStoreError::Shape(key.clone())),
            }
        }
        Ok(store)
    }

    /// Adds a global secret (available on every page).
    ///
    /// # Errors
    /// [`SecretStoreError::TooShort`] when the value has fewer than
    /// [`MIN_SECRET_LEN`] characters, [`SecretStoreError::Totp`] when a TOTP
    /// key's value is not base32.
    pub fn with_secret(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, SecretStoreError> {
        let (key, value) = (key.into(), value.into());
        check_value(&key, &value)?;
        self.global.insert(key, value);
        self.base_masker = OnceLock::new();
        Ok(self)
    }

    /// Adds a secret available only on pages matching `pattern`.
    ///
    /// # Errors
    /// [`SecretStoreError`] for a bad pattern, a value shorter than
    /// [`MIN_SECRET_LEN`] characters, or a bad TOTP seed.
    pub fn with_scoped_secret(
        mut self,
        pattern: &str,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, SecretStoreError> {
        let (key, value) = (key.into(), value.into());
        check_value(&key, &value)?;
        let parsed = UrlPattern::parse(pattern)?;
        if let Some((_, group)) = self.scoped.iter_mut().find(|(p, _)| *p == parsed) {
            group.insert(key, value);
        } else {
            self.scoped.push((parsed, BTreeMap::from([(key, value)])));
        }
        self.base_masker = OnceLock::new();
        Ok(self)
    }

    /// `true` when the store holds no secret.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.scoped.iter().all(|(_, g)| g.is_empty())
    }

    /// The keys usable on `page_url`, sorted (names only, never values).
    pub fn keys_for(&self, page_url: Option<&str>) -> Vec<&str> {
        let mut keys: Vec<&str> = self.global.keys().map(String::as_str).collect();
        for (pattern, group) in &self.scoped {
            if page_url.is_some_and(|u| pattern.matches_str(u)) {
                keys.extend(group.keys().map(String::as_str));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The value of `key` on `page_url`: a scoped group matching the page first, then global.
    fn lookup(&self, key: &str, page_url: Option<&str>) -> Option<&str> {
        self.scoped
            .iter()
            .filter(|(p, _)| page_url.is_some_and(|u| p.matches_str(u)))
            .find_map(|(_, g)| g.get(key))
            .or_else(|| self.global.get(key))
            .map(String::as_str)
    }

    fn resolve(
        &self,
        key: &str,
        page_url: Option<&str>,
        used: &mut Vec<(String, String)>,
    ) -> Result<String, SecretError> {
        let Some(raw) = self.lookup(key, page_url) else {
            let exists_elsewhere = self.scoped.iter().any(|(_, g)| g.contains_key(key));
            let available = self.keys_for(page_url);
            let why = if exists_elsewhere {
                "is not allowed on this page"
            } else {
                "does not exist"
            };
            let list = if available.is_empty() {
                "none".to_owned()
            } else {
                available.join(", ")
            };
            return Err(SecretError {
                message: format!("The secret `{key}` {why}. Secrets available here: {list}."),
            });
        };
        let value = if key.ends_with(TOTP_SUFFIX) {
            totp_now(raw).ok_or_else(|| SecretError {
                message: format!("The secret `{key}` could not produce a TOTP code."),
            })?
        } else {
            raw.to_owned()
        };
        used.push((key.to_owned(), value.clone()));
        Ok(value)
    }

    /// Replaces every placeholder in every string of `args`, at any depth.
    /// Returns the substituted values by key (for masking TOTP codes too).
    pub(crate) fn substitute(
        &self,
        args: &mut Map<String, Value>,
        page_url: Option<&str>,
    ) -> Result<Vec<(String, String)>, SecretError> {
        let mut used = Vec::new();
        for v in args.values_mut() {
            self.substitute_value(v, page_url, &mut used)?;
        }
        Ok(used)
    }

    fn substitute_value(
        &self,
        v: &mut Value,
        page_url: Option<&str>,
        used: &mut Vec<(String, String)>,
    ) -> Result<(), SecretError> {
        match v {
            Value::String(s) if contains_placeholder(s) => {
                *s = self.substitute_str(s, page_url, used)?;
            }
            Value::Array(items) => {
                for item in items {
                    self.substitute_value(item, page_url, used)?;
                }
            }
            Value::Object(map) => {
                for item in map.values_mut() {
                    self.substitute_value(item, page_url, used)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn substitute_str(
        &self,
        s: &str,
        page_url: Option<&str>,
        used: &mut Vec<(String, String)>,
    ) -> Result<String, SecretError> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find(OPEN) {
            out.push_str(&rest[..start]);
            let after = &rest[start + OPEN.len()..];
            let Some(end) = after.find(CLOSE) else {
                return Err(SecretError {
                    message: "A `<secret>` placeholder is not closed with `</secret>`.".to_owned(),
                });
            };
            let key = after[..end].trim();
            out.push_str(&self.resolve(key, page_url, used)?);
            rest = &after[end + CLOSE.len()..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `text` with every value in the store (global and scoped, in each form
    /// results are masked in: as is, JSON- and Debug-escaped, base64, hex,
    /// URL-encoded) replaced by its `<secret>key</secret>` placeholder: the
    /// pipeline's result masking, for text that does not pass through a
    /// call (a conversation sent to a reviewer model, a log line). TOTP
    /// codes are not known here (they change every 30 s); only their seeds
    /// are masked.
    ///
    /// ```
    /// use tool_core::SecretStore;
    /// let store = SecretStore::new().with_secret("api_key", "S3cretValue99").unwrap();
    /// assert_eq!(store.mask_text("token S3cretValue99."), "token <secret>api_key</secret>.");
    /// ```
    pub fn mask_text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        if !self.is_empty() {
            self.masker(&[]).mask_string(&mut text);
        }
        text
    }

    /// A masker for every value in the store plus the TOTP codes in `used`
    /// (the other used values are stored values already). Without TOTP codes
    /// the store's cached masker is returned.
    pub(crate) fn masker(&self, used: &[(String, String)]) -> Arc<Masker> {
        let codes: Vec<(String, String)> = used
            .iter()
            .filter(|(k, _)| k.ends_with(TOTP_SUFFIX))
            .cloned()
            .collect();
        if codes.is_empty() {
            return Arc::clone(
                self.base_masker
                    .get_or_init(|| Arc::new(self.build_masker(&[]))),
            );
        }
        Arc::new(self.build_masker(&codes))
    }

    fn build_masker(&self, extra: &[(String, String)]) -> Masker {
        masker_of(self.value_pairs(extra))
    }

    /// Every stored value (and each of `extra`'s `(key, value)`) with its placeholder.
    fn value_pairs(&self, extra: &[(String, String)]) -> Vec<(String, String)> {
        self.global
            .iter()
            .chain(self.scoped.iter().flat_map(|(_, g)| g.iter()))
            .map(|(k, v)| (v.clone(), placeholder(k)))
            .chain(extra.iter().map(|(k, v)| (v.clone(), placeholder(k))))
            .collect()
    }
}

/// The masker replacing each `(value, replacement)` in every form
/// [`masked_forms`] lists; values shorter than [`MIN_SECRET_LEN`] are left out.
fn masker_of(values: Vec<(String, String)>) -> Masker {
    let mut pairs: Vec<(String, String)> = values
        .into_iter()
        .filter(|(v, _)| v.chars().count() >= MIN_SECRET_LEN)
        .flat_map(|(v, p)| {
            masked_forms(&v)
                .into_iter()
                .map(move |form| (form, p.clone()))
        })
        .collect();
    // Longest values first so a value containing another is masked whole.
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    pairs.dedup_by(|a, b| a.0 == b.0);
    Masker::new(pairs)
}

/// The masker for `store`'s values (if any) plus the values of environment
/// variables withheld from a child process, `(name, value)`: each becomes
/// `<withheld:NAME>`. Values shorter than
/// [`MIN_MASKED_ENV_LEN`](crate::governance::secret_env::MIN_MASKED_ENV_LEN)
/// characters or not UTF-8 are not masked. `None` when nothing is masked.
pub(crate) fn masker_with_env(
    store: Option<&SecretStore>,
    withheld: &[(String, std::ffi::OsString)],
) -> Option<Arc<Masker>> {
    let env: Vec<(String, String)> = withheld
        .iter()
        .filter_map(|(name, value)| {
            let value = value.to_str()?;
            (value.chars().count() >= crate::governance::secret_env::MIN_MASKED_ENV_LEN)
                .then(|| (value.to_owned(), format!("<withheld:{name}>")))
        })
        .collect();
    if env.is_empty() {
        return masker_for(store, &[]);
    }
    let mut values = store.map(|s| s.value_pairs(&[])).unwrap_or_default();
    values.extend(env);
    Some(Arc::new(masker_of(values)))
}

/// A value as it may appear in text (the module docs list the forms): raw,
/// JSON-escaped (inside a JSON string, e.g. an argument error quoting what
/// was sent), Rust-`Debug`-escaped, standalone base64 (two alphabets, with
/// and without padding), standalone hex (lower and upper case) and
/// form-urlencoded (space as `+` and as `%20`), and for a value with
/// non-ASCII characters the JSON form with those escaped as `\uXXXX`
/// (lower- and upper-case hex digits). Sorted, without duplicates.
fn masked_forms(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let mut forms = vec![value.to_owned()];
    let strip = |s: String| s.get(1..s.len().saturating_sub(1)).map(str::to_owned);
    if let Some(json) = serde_json::to_string(value).ok().and_then(strip) {
        forms.push(json);
    }
    if let Some(debug) = strip(format!("{value:?}")) {
        forms.push(debug);
    }
    if !value.is_ascii() {
        // JSON with every non-ASCII character escaped (`\u00e9`, surrogate
        // pairs beyond the BMP): Python's `json.dumps` default, and many others.
        if let Some(json) = serde_json::to_string(value).ok().and_then(strip) {
            let (mut lower, mut upper) = (String::new(), String::new());
            for c in json.chars() {
                if c.is_ascii() {
                    lower.push(c);
                    upper.push(c);
                } else {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        lower.push_str(&format!("\\u{unit:04x}"));
                        upper.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
            forms.push(lower);
            forms.push(upper);
        }
    }
    for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
        forms.push(engine.encode(bytes));
    }
    let lower_hex = hex_lower(bytes);
    forms.push(lower_hex.to_ascii_uppercase());
    forms.push(lower_hex);
    let form_encoded: String = url::form_urlencoded::byte_serialize(bytes).collect();
    forms.push(form_encoded.replace('+', "%20"));
    forms.push(form_encoded);
    forms.sort();
    forms.dedup();
    forms
}

/// Lower-case hex of `bytes`, two digits a byte.
fn hex_lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// The masker for `store` (a context's [`SecretStore`], if any) plus the TOTP
/// codes in `used`; `None` when there is no store or it is empty. The one
/// place that decides whether a call's text is masked: the pipeline's result,
/// an argument error quoting a value, a panic message for the log.
pub(crate) fn masker_for(
    store: Option<&SecretStore>,
    used: &[(String, String)],
) -> Option<Arc<Masker>> {
    store.filter(|s| !s.is_empty()).map(|s| s.masker(used))
}

impl Masker {
    /// Masks every text of `result` the model, a host or a log can read:
    /// output, title, long-term memory, error message, notes, attachment
    /// names and paths, and every string in the metadata.
    pub(crate) fn mask_result(&self, result: &mut ToolResult) {
        self.mask_string(&mut result.output);
        if let Some(t) = &mut result.title {
            self.mask_string(t);
        }
        if let Some(m) = &mut result.long_term_memory {
            self.mask_string(m);
        }
        if let Some(e) = &mut result.error {
            self.mask_string(&mut e.message);
        }
        for n in &mut result.notes {
            self.mask_string(n);
        }
        for a in &mut result.attachments {
            self.mask_string(&mut a.name);
            if let Some(p) = &mut a.path {
                self.mask_string(p);
            }
        }
        let mut meta = Value::Object(std::mem::take(&mut result.metadata));
        self.mask_value(&mut meta);
        if let Value::Object(m) = meta {
            result.metadata = m;
        }
    }
}

/// Whether any string in `args`, at any depth, holds a `<secret>` placeholder.
pub(crate) fn has_placeholder(args: &Map<String, Value>) -> bool {
    fn walk(v: &Value) -> bool {
        match v {
            Value::String(s) => contains_placeholder(s),
            Value::Array(items) => items.iter().any(walk),
            Value::Object(m) => m.values().any(walk),
            _ => false,
        }
    }
    args.values().any(walk)
}

/// Whether `text` contains a placeholder opening (`<secret>`). One prebuilt
/// searcher for every call: `str::contains` would set up a new one per string.
pub(crate) fn contains_placeholder(text: &str) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(OPEN));
    FINDER.find(text.as_bytes()).is_some()
}

/// The placeholder text for `key`.
pub fn placeholder(key: &str) -> String {
    format!("{OPEN}{key}{CLOSE}")
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("global_keys", &self.global.keys().collect::<Vec<_>>())
            .field(
                "scoped_keys",
                &self
                    .scoped
                    .iter()
                    .map(|(p, g)| (p.as_str(), g.keys().collect::<Vec<_>>()))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Refuses values shorter than [`MIN_SECRET_LEN`] and bad TOTP seeds.
fn check_value(key: &str, value: &str) -> Result<(), SecretStoreError> {
    let len = value.chars().count();
    if len < MIN_SECRET_LEN {
        return Err(SecretStoreError::TooShort {
            key: key.to_owned(),
            len,
        });
    }
    if key.ends_with(TOTP_SUFFIX) && totp_at(value, 0).is_none() {
        return Err(SecretStoreError::Totp(key.to_owned()));
    }
    Ok(())
}

fn totp_at(seed: &str, unix_seconds: u64) -> Option<String> {
    let cleaned: String = seed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let secret = totp_rs::Secret::try_from_base32(cleaned.to_ascii_uppercase()).ok()?;
    let totp = totp_rs::Builder::new()
        .with_algorithm(totp_rs::Algorithm::SHA1)
        .with_digits(6)
        .with_step_duration(30)
        .with_secret(secret)
        .build_noncompliant();
    Some(totp.generate(unix_seconds).to_string())
}

fn totp_now(seed: &str) -> Option<String> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    totp_at(seed, now)
}

/// Replaces secret values with their placeholders.
#[derive(Debug)]
pub(crate) struct Masker {
    automaton: Option<AhoCorasick>,
    replacements: Vec<String>,
    /// The masked forms, in the automaton's pattern order.
    forms: Vec<String>,
}

impl Masker {
    fn new(pairs: Vec<(String, String)>) -> Self {
        if pairs.is_empty() {
            return Self {
                automaton: None,
                replacements: Vec::new(),
                forms: Vec::new(),
            };
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(pairs.iter().map(|(v, _)| v.as_str()))
            .ok();
        let (forms, replacements) = pairs.into_iter().unzip();
        Self {
            automaton,
            replacements,
            forms,
        }
    }

    /// The length of the longest end of `bytes` that is the beginning (not
    /// the whole) of a masked form: bytes a stream that goes on must not show
    /// yet, since the rest of a value may follow. 0 when none is.
    pub(crate) fn open_tail(&self, bytes: &[u8]) -> usize {
        let longest = self.forms.iter().map(String::len).max().unwrap_or(0);
        (1..longest.min(bytes.len() + 1))
            .rev()
            .find(|&k| {
                let tail = &bytes[bytes.len() - k..];
                self.forms
                    .iter()
                    .any(|f| f.len() > k && f.as_bytes().starts_with(tail))
            })
            .unwrap_or(0)
    }

    /// The searcher over every masked form (`None`: nothing to mask), for
    /// [`crate::truncate::StreamMasker`], which masks a byte stream piece by piece.
    pub(crate) fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton.as_ref()
    }

    /// The placeholder that replaces the searcher's pattern `pattern`.
    pub(crate) fn replacement(&self, pattern: usize) -> &str {
        self.replacements.get(pattern).map_or("", String::as_str)
    }

    /// Masks one string in place.
    pub(crate) fn mask_string(&self, s: &mut String) {
        if let Some(ac) = &self.automaton
            && ac.is_match(s.as_str())
        {
            *s = ac.replace_all(s, &self.replacements);
        }
    }

    /// Masks every string (and object key) of a JSON value in place.
    pub(crate) fn mask_value(&self, v: &mut Value) {
        match v {
            Value::String(s) => self.mask_string(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.mask_value(i)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (mut k, mut item) in entries {
                    self.mask_string(&mut k);
                    self.mask_value(&mut item);
                    map.insert(k, item);
                }
            }
            _ => {}
        }
    }
}

/// A panic's payload as text (`<non-string panic payload>` when it is not
/// a string), with `store`'s secret values masked (the call's context's
/// store): for `tracing` only.
pub(crate) fn panic_detail(
    payload: &(dyn std::any::Any + Send),
    store: Option<&SecretStore>,
) -> String {
    let mut detail = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".to_owned());
    if let Some(masker) = masker_for(store, &[]) {
        masker.mask_string(&mut detail);
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store() -> SecretStore {
        SecretStore::from_json(&json!({
            "api_key": "sk-live-123",
            "*.github.com": {"gh_token": "ghp_secret", "gh_bu_2fa_code": "JBSWY3DPEHPK3PXP"},
            "*.gitlab.com": {"gl_token": "glpat-xyz"}
        }))
        .unwrap()
    }

    #[test]
    fn rfc6238_sha1_vector_through_our_parameters() {
        // RFC 6238 appendix B, SHA-1, T = 59: 94287082 (8 digits) -> last 6 digits 287082.
        let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"; // base32 of "12345678901234567890"
        assert_eq!(totp_at(seed, 59).unwrap(), "287082");
        assert_eq!(totp_at(seed, 1_111_111_109).unwrap(), "081804");
    }

    #[test]
    fn substitutes_at_any_depth_with_scoping() {
        let s = store();
        let mut args =
            json!({"a": "<secret>api_key</secret>", "n": [{"t": "x <secret>gh_token</secret> y"}]})
                .as_object()
                .unwrap()
                .clone();
        let used = s
            .substitute(&mut args, Some("https://api.github.com/user"))
            .unwrap();
        assert_eq!(args["a"], "sk-live-123");
        assert_eq!(args["n"][0]["t"], "x ghp_secret y");
        assert_eq!(used.len(), 2);
    }

    #[test]
    fn scoped_secret_refused_elsewhere_without_revealing_values() {
        let s = store();
        let mut args = json!({"t": "<secret>gh_token</secret>"})
            .as_object()
            .unwrap()
            .clone();
        let e = s
            .substitute(&mut args, Some("https://gitlab.com"))
            .unwrap_err();
        assert_eq!(
            e.message,
            "The secret `gh_token` is not allowed on this page. Secrets available here: api_key."
        );
        let e = s.substitute(&mut args, None).unwrap_err();
        assert!(!e.message.contains("ghp_secret") && !e.message.contains("sk-live"));
        let mut args = json!({"t": "<secret>nope</secret>"})
            .as_object()
            .unwrap()
            .clone();
        assert!(
            s.substitute(&mut args, None)
                .unwrap_err()
                .message
                .contains("does not exist")
        );
        let mut args = json!({"t": "<secret>api_key"}).as_object().unwrap().clone();
        assert!(
            s.substitute(&mut args, None)
                .unwrap_err()
                .message
                .contains("not closed")
        );
    }

    #[test]
    fn totp_key_yields_six_digits_and_is_masked() {
        let s = store();
        let mut args = json!({"code": "<secret>gh_bu_2fa_code</secret>"})
            .as_object()
            .unwrap()
            .clone();
        let used = s
            .substitute(&mut args, Some("https://www.github.com"))
            .unwrap();
        let code = args["code"].as_str().unwrap().to_owned();
        assert_eq!(code.len(), 6);
        assert!(code.chars().all(|c| c.is_ascii_digit()));
        let masker = s.masker(&used);
        let mut out = format!("entered {code} and ghp_secret, key sk-live-123");
        masker.mask_string(&mut out);
        assert_eq!(
            out,
            "entered <secret>gh_bu_2fa_code</secret> and <secret>gh_token</secret>, key <secret>api_key</secret>"
        );
    }

    #[test]
    fn escaped_forms_are_masked_too() {
        let s = SecretStore::new()
            .with_secret("pw", "s3cr3t\"q\nx")
            .unwrap();
        let m = s.masker(&[]);
        let mut json_text = serde_json::to_string(&json!({"sent": "s3cr3t\"q\nx"})).unwrap();
        m.mask_string(&mut json_text);
        assert_eq!(json_text, r#"{"sent":"<secret>pw</secret>"}"#);
        let mut debug_text = format!("{:?}", "s3cr3t\"q\nx");
        m.mask_string(&mut debug_text);
        assert_eq!(debug_text, "\"<secret>pw</secret>\"");
    }

    fn masked(store: &SecretStore, text: &str) -> String {
        let mut text = text.to_owned();
        store.masker(&[]).mask_string(&mut text);
        text
    }

    #[test]
    fn standalone_encodings_are_masked() {
        // Expected forms worked out independently (Python's base64 and
        // bytes.hex), not with the code under test.
        let cases: [(&str, &[&str]); 4] = [
            (
                "hunter2-password",
                &[
                    "aHVudGVyMi1wYXNzd29yZA==",
                    "aHVudGVyMi1wYXNzd29yZA",
                    "68756e746572322d70617373776f7264",
                    "68756E746572322D70617373776F7264",
                ],
            ),
            (
                // `+`/`-` differ between the alphabets; a two-byte `ü`.
                "tok>?~\u{fc}=1",
                &[
                    "dG9rPj9+w7w9MQ==",
                    "dG9rPj9+w7w9MQ",
                    "dG9rPj9-w7w9MQ==",
                    "dG9rPj9-w7w9MQ",
                    "746f6b3e3f7ec3bc3d31",
                    "746F6B3E3F7EC3BC3D31",
                    "tok%3E%3F%7E%C3%BC%3D1",
                ],
            ),
            (
                // `/`/`_` differ; no padding at all (12 bytes).
                "p@ss w0rd&=?",
                &[
                    "cEBzcyB3MHJkJj0/",
                    "cEBzcyB3MHJkJj0_",
                    "704073732077307264263d3f",
                    "704073732077307264263D3F",
                    "p%40ss+w0rd%26%3D%3F",
                    "p%40ss%20w0rd%26%3D%3F",
                ],
            ),
            (
                "sk-live-123",
                &[
                    "c2stbGl2ZS0xMjM=",
                    "c2stbGl2ZS0xMjM",
                    "736b2d6c6976652d313233",
                    "736B2D6C6976652D313233",
                ],
            ),
        ];
        for (value, forms) in cases {
            let store = SecretStore::new().with_secret("pw", value).unwrap();
            for form in forms {
                assert_eq!(
                    masked(&store, &format!("sent [{form}] ok")),
                    "sent [<secret>pw</secret>] ok",
                    "{value:?} as {form:?}"
                );
            }
        }
        // Only the forms the docs list: mixed-case hex is not one of them.
        let store = SecretStore::new()
            .with_secret("pw", "hunter2-password")
            .unwrap();
        let mixed = "68756E746572322d70617373776f7264";
        assert_eq!(masked(&store, mixed), mixed);
    }

    #[test]
    fn base64_inside_a_larger_blob_is_not_the_standalone_form() {
        // Documented limit: base64("user:hunter2-password") shares no run
        // with base64("hunter2-password") because the value starts 5 bytes in.
        let store = SecretStore::new()
            .with_secret("pw", "hunter2-password")
            .unwrap();
        let basic = "Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk";
        assert_eq!(masked(&store, basic), basic);
        // Starting at a multiple of 3 bytes and ending the blob, the
        // standalone form is there and is masked.
        let aligned = "YWJjaHVudGVyMi1wYXNzd29yZA=="; // base64("abchunter2-password")
        assert_eq!(masked(&store, aligned), "YWJj<secret>pw</secret>");
    }

    #[test]
    fn short_secrets_are_refused_with_a_message() {
        let e = SecretStore::from_json(&json!({"pin": "abc"})).unwrap_err();
        assert_eq!(
            e,
            SecretStoreError::TooShort {
                key: "pin".to_owned(),
                len: 3
            }
        );
        assert_eq!(
            e.to_string(),
            "secret \"pin\" is 3 characters long, shorter than the minimum of 4 (MIN_SECRET_LEN): \
             masking so short a value would replace it inside every word that contains it; use a \
             longer value"
        );
        assert!(!e.to_string().contains("abc"));
        for (store, key, len) in [
            (SecretStore::from_json(&json!({"empty": ""})), "empty", 0),
            (
                SecretStore::from_json(&json!({"*.example.com": {"site_pin": "12"}})),
                "site_pin",
                2,
            ),
            // Characters, not bytes: three two-byte letters are still three.
            (
                SecretStore::new().with_secret("umlauts", "äöü"),
                "umlauts",
                3,
            ),
            (
                SecretStore::new().with_scoped_secret("*.example.com", "x", "xyz"),
                "x",
                3,
            ),
        ] {
            assert_eq!(
                store.unwrap_err(),
                SecretStoreError::TooShort {
                    key: key.to_owned(),
                    len
                }
            );
        }
        // Four characters are enough, and words merely containing a
        // shorter part of them are left alone.
        let store = SecretStore::from_json(&json!({"pin": "abcd"})).unwrap();
        assert_eq!(
            masked(&store, "abc abcd abcde"),
            "abc <secret>pin</secret> <secret>pin</secret>e"
        );
    }

    #[test]
    fn bad_store_shapes() {
        assert!(matches!(
            SecretStore::from_json(&json!({"k": 1})),
            Err(SecretStoreError::Shape(_))
        ));
        assert!(matches!(
            SecretStore::from_json(&json!({"x_bu_2fa_code": "not base32!"})),
            Err(SecretStoreError::Totp(_))
        ));
        assert!(matches!(
            SecretStore::from_json(&json!({"go*gle.com": {"k": "v"}})),
            Err(SecretStoreError::Pattern(_))
        ));
        let dbg = format!("{:?}", store());
        assert!(!dbg.contains("sk-live") && dbg.contains("api_key"));
    }

    #[test]
    fn json_with_non_ascii_escaped_is_masked() {
        let store = SecretStore::new()
            .with_secret("quo", "a\"b\\c/d\u{e9}\u{20ac}\u{1f600}")
            .unwrap();
        let ascii = r#"a\"b\\c/d\u00e9\u20ac\ud83d\ude00"#;
        let upper = r#"a\"b\\c/d\u00E9\u20AC\uD83D\uDE00"#;
        for text in [ascii, upper] {
            let masked = masked(&store, &format!("printed: \"{text}\" ok"));
            assert!(!masked.contains(text), "{masked}");
            assert!(masked.contains("printed: "), "{masked}");
        }
    }
}
