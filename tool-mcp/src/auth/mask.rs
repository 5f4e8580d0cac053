//! Secrets kept out of auth error messages (review 26, F5): an
//! authorization server may echo what it was sent (a client secret, an
//! assertion, a refresh token) in an error body, and rmcp and this crate
//! quote such bodies in their errors. Every auth error leaving the
//! transport goes through [`mask_error`]: each value the connection knows
//! to be secret is replaced (in every form the secret store masks: as is,
//! JSON-escaped, form-encoded, base64, hex), then the value of every field
//! named like a credential ([`SECRET_FIELDS`], as JSON `"name": "value"`,
//! form `name=value` or `name: value`) and every JWT-shaped word.

use rmcp::transport::auth::AuthError;

/// Fields whose value is masked wherever a message quotes them (matched
/// case-insensitively, as whole names). `token` alone counts only as a
/// JSON key (`"token":`) or a form field (`token=`), so that a sentence such
/// as "the platform token: FILE: not found" keeps its file name.
pub(crate) const SECRET_FIELDS: &[&str] = &[
    "client_secret",
    "client_assertion",
    "assertion",
    "access_token",
    "refresh_token",
    "id_token",
    "subject_token",
    "actor_token",
    "code_verifier",
    "code",
    "device_code",
    "registration_access_token",
    "password",
    "token",
];

/// What replaces a masked value.
pub(crate) const MASKED: &str = "<masked>";

/// `text` with `known` secret values, credential fields and JWT-shaped
/// words masked (see the module docs). Values shorter than 4 characters
/// are not searched for (they would be masked inside every word).
pub(crate) fn mask_text(text: &str, known: &[String]) -> String {
    let mut store = tool_core::SecretStore::new();
    for (n, value) in known.iter().enumerate() {
        if let Ok(with) = store
            .clone()
            .with_secret(format!("oauth_secret_{n}"), value.clone())
        {
            store = with;
        }
    }
    let text = store.mask_text(text);
    let text = mask_fields(&text);
    mask_jwts(&text)
}

/// An auth error with its text masked ([`mask_text`]), of the same variant
/// where the variant carries a text; the others are kept.
pub(crate) fn mask_error(error: AuthError, known: &[String]) -> AuthError {
    let m = |s: String| mask_text(&s, known);
    match error {
        AuthError::AuthorizationFailed(s) => AuthError::AuthorizationFailed(m(s)),
        AuthError::TokenExchangeFailed(s) => AuthError::TokenExchangeFailed(m(s)),
        AuthError::TokenRefreshFailed(s) => AuthError::TokenRefreshFailed(m(s)),
        AuthError::TokenRefreshRejected(s) => AuthError::TokenRefreshRejected(m(s)),
        AuthError::CredentialStoreError(s) => AuthError::CredentialStoreError(m(s)),
        AuthError::OAuthError(s) => AuthError::OAuthError(m(s)),
        AuthError::MetadataError(s) => AuthError::MetadataError(m(s)),
        AuthError::InternalError(s) => AuthError::InternalError(m(s)),
        AuthError::InvalidTokenType(s) => AuthError::InvalidTokenType(m(s)),
        AuthError::InvalidScope(s) => AuthError::InvalidScope(m(s)),
        AuthError::RegistrationFailed(s) => AuthError::RegistrationFailed(m(s)),
        AuthError::ClientCredentialsError(s) => AuthError::ClientCredentialsError(m(s)),
        other => other,
    }
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Masks the values of [`SECRET_FIELDS`].
fn mask_fields(text: &str) -> String {
    let bytes = text.as_bytes();
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let Some((value_start, value_end)) = field_value_at(&lower, bytes, at) else {
            at += 1;
            continue;
        };
        out.push_str(&text[copied..value_start]);
        out.push_str(MASKED);
        copied = value_end;
        at = value_end.max(at + 1);
    }
    out.push_str(&text[copied..]);
    out
}

/// When a secret field's name starts at `at`: the byte range of its value.
fn field_value_at(lower: &str, bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    if at > 0 && is_name_char(bytes[at - 1]) {
        return None;
    }
    let quoted_key = at > 0 && matches!(bytes[at - 1], b'"' | b'\'');
    let name = SECRET_FIELDS
        .iter()
        .filter(|name| lower.as_bytes()[at..].starts_with(name.as_bytes()))
        .max_by_key(|name| name.len())?;
    let mut i = at + name.len();
    if bytes.get(i).is_some_and(|c| is_name_char(*c)) {
        return None;
    }
    if quoted_key && bytes.get(i).is_some_and(|c| matches!(c, b'"' | b'\'')) {
        i += 1;
    }
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    let separator = *bytes.get(i)?;
    let bare_colon = separator == b':' && !quoted_key;
    if !matches!(separator, b':' | b'=') || (*name == "token" && bare_colon) {
        return None;
    }
    i += 1;
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    match bytes.get(i) {
        Some(&quote @ (b'"' | b'\'')) => {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end] != quote {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            let end = end.min(bytes.len());
            (end > start).then_some((start, end))
        }
        Some(_) => {
            let start = i;
            let end = bytes[start..]
                .iter()
                .position(|c| c.is_ascii_whitespace() || b"&,;}])\"'".contains(c))
                .map_or(bytes.len(), |p| start + p);
            (end > start).then_some((start, end))
        }
        None => None,
    }
}

/// Masks words shaped like a JWT (`eyJ…` with at least two dots).
fn mask_jwts(text: &str) -> String {
    let bytes = text.as_bytes();
    let jwt_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = text[at..].find("eyJ") {
        let start = at + found;
        let end = bytes[start..]
            .iter()
            .position(|c| !jwt_char(*c))
            .map_or(bytes.len(), |p| start + p);
        let boundary = start == 0 || !jwt_char(bytes[start - 1]);
        let dots = bytes[start..end].iter().filter(|c| **c == b'.').count();
        if boundary && dots >= 2 && end - start >= 20 {
            out.push_str(&text[copied..start]);
            out.push_str(MASKED);
            copied = end;
        }
        at = end.max(start + 3);
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_fields_and_jwts_are_masked() {
        let known = vec!["s3cret value/0123".to_owned()];
        let body = r#"HTTP 400: {"error":"invalid_client","error_description":"bad client_secret=s3cret value/0123 for you","client_secret":"other-7","assertion": "abc.def","refresh_token":"rt-9","access_token":"at\"x","echo":"s3cret+value%2F0123"}"#;
        let shown = mask_text(body, &known);
        for leaked in ["s3cret", "other-7", "abc.def", "rt-9", "at\\\"x"] {
            assert!(!shown.contains(leaked), "{leaked} in {shown}");
        }
        assert!(shown.contains("invalid_client"), "{shown}");
        let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
        let shown = mask_text(&format!("the assertion {jwt} was refused"), &[]);
        assert_eq!(shown, "the assertion <masked> was refused");
        let form = mask_text("grant_type=refresh_token&refresh_token=r-1&code=c-2", &[]);
        assert_eq!(
            form,
            "grant_type=refresh_token&refresh_token=<masked>&code=<masked>"
        );
    }

    #[test]
    fn ordinary_sentences_keep_their_words() {
        for text in [
            "the platform token: /run/token: No such file or directory",
            "the token endpoint http://127.0.0.1:9/token refused the request (HTTP 400)",
            "`oauth.client_secret`: $SECRET is not set",
            "grant_type=client_credentials",
        ] {
            assert_eq!(mask_text(text, &[]), text);
        }
    }
}
