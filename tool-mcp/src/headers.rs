//! HTTP headers of a `url` server (`.mcp.json`'s `"headers"`, [`McpToolSource::with_header`],
//! [`McpToolSource::with_bearer_token`]): `${VAR}` resolution in this
//! process, validation, and values that never reach a message or a log.
//!
//! [`McpToolSource::with_header`]: crate::McpToolSource::with_header
//! [`McpToolSource::with_bearer_token`]: crate::McpToolSource::with_bearer_token

use std::collections::HashMap;

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::error::{Error, ErrorKind};

/// Most headers one server entry may set.
pub const MAX_HEADERS: usize = 64;

/// Longest header value after `${VAR}` resolution, in bytes (8 KiB: a long
/// JWT fits; a proxy usually refuses far less).
pub const MAX_HEADER_VALUE_BYTES: usize = 8 * 1024;

/// Headers the MCP transport sets itself (Streamable HTTP): a configuration
/// may not replace them.
const TRANSPORT_HEADERS: [&str; 5] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// A text that may be a secret: kept as given, shown as `***` by `Debug`.
#[derive(Clone)]
pub(crate) struct Hidden(pub(crate) String);

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A server's headers and bearer token as configured (values unresolved).
#[derive(Clone, Debug, Default)]
pub(crate) struct HeaderConfig {
    /// Name → value template (`${VAR}` not yet resolved).
    pub(crate) headers: Vec<(String, Hidden)>,
    /// The token of `Authorization: Bearer <token>` (resolved as given).
    pub(crate) bearer: Option<Hidden>,
}

impl HeaderConfig {
    /// Whether these send an `Authorization` header (a bearer token or a
    /// configured header), which then wins over OAuth.
    pub(crate) fn sets_authorization(&self) -> bool {
        self.bearer.is_some()
            || self
                .headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    }

    /// The transport configuration for `url` with these headers, each
    /// value's `${VAR}`s resolved from `lookup` (this process's environment
    /// in [`crate::McpToolSource::connect`]).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] naming the header (never its value) when a
    /// name is invalid or reserved by the transport, a variable is unset, a
    /// value has a control character or is over [`MAX_HEADER_VALUE_BYTES`],
    /// or there are more than [`MAX_HEADERS`].
    pub(crate) fn transport_config(
        &self,
        url: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<StreamableHttpClientTransportConfig, Error> {
        let bad = |why: String| Error::new(ErrorKind::Config, why);
        if self.headers.len() > MAX_HEADERS {
            return Err(bad(format!(
                "{} headers given; at most {MAX_HEADERS}",
                self.headers.len()
            )));
        }
        let mut headers = HashMap::new();
        for (name, template) in &self.headers {
            let shown = tool_rules::text::clip(name, tool_rules::text::Clip::chars(60));
            let header = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| bad(format!("header `{shown}`: not a valid HTTP header name")))?;
            if TRANSPORT_HEADERS.contains(&header.as_str()) {
                return Err(bad(format!(
                    "header `{shown}`: set by the MCP transport itself, a configuration may not replace it"
                )));
            }
            let value = resolve(&template.0, &lookup)
                .map_err(|why| bad(format!("header `{shown}`: {why}")))?;
            headers.insert(header, header_value(&value, &shown)?);
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
        if let Some(token) = &self.bearer {
            let token =
                resolve(&token.0, &lookup).map_err(|why| bad(format!("bearer token: {why}")))?;
            // Checked like a header value: rmcp builds `Bearer <token>` from it.
            header_value(&token, "Authorization")?;
            config = config.auth_header(token);
        }
        Ok(config)
    }
}

fn header_value(value: &str, shown: &str) -> Result<http::HeaderValue, Error> {
    if value.len() > MAX_HEADER_VALUE_BYTES {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "header `{shown}`: the value is {} bytes, over the limit of {MAX_HEADER_VALUE_BYTES}",
                value.len()
            ),
        ));
    }
    let mut header = http::HeaderValue::from_str(value).map_err(|_| {
        Error::new(
            ErrorKind::Config,
            format!("header `{shown}`: the value has a control or non-ASCII character"),
        )
    })?;
    // Kept out of HTTP/2 header compression tables and of `Debug` output.
    header.set_sensitive(true);
    Ok(header)
}

/// `template` with each `${NAME}` replaced by `lookup(NAME)`; `$` not
/// followed by `{` is kept as is (Claude Code's and Cursor's `${VAR}`
/// syntax; no defaults, no nesting).
///
/// # Errors
/// A reason naming the variable (never a value) when one is unset, or the
/// `${` is not closed, or the name is not `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn resolve(
    template: &str,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err("`${` without a closing `}`".to_owned());
        };
        let name = &after[..end];
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let shown = tool_rules::text::clip(name, tool_rules::text::Clip::chars(60));
        if !valid {
            return Err(format!(
                "`${{{shown}}}` is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"
            ));
        }
        let value = lookup(name).ok_or_else(|| {
            format!("environment variable `{shown}` is not set (it is read by this program, not the server)")
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn variables_resolve_and_unset_ones_are_named() {
        assert_eq!(
            resolve("Bearer ${TOKEN}", &env).as_deref(),
            Ok("Bearer s3cret")
        );
        assert_eq!(
            resolve("a$b ${TOKEN}${TOKEN}", &env).as_deref(),
            Ok("a$b s3crets3cret")
        );
        let err = resolve("${MISSING}", &env).unwrap_err();
        assert!(err.contains("`MISSING` is not set"), "{err}");
        assert!(resolve("${TOKEN", &env).unwrap_err().contains("closing"));
        assert!(
            resolve("${1X}", &env)
                .unwrap_err()
                .contains("not an environment variable")
        );
    }

    #[test]
    fn bad_headers_are_refused_without_their_values() {
        let config = |name: &str, value: &str| HeaderConfig {
            headers: vec![(name.to_owned(), Hidden(value.to_owned()))],
            bearer: None,
        };
        let err = |c: HeaderConfig| {
            c.transport_config("http://x/mcp", env)
                .unwrap_err()
                .to_string()
        };
        assert!(err(config("Mcp-Session-Id", "1")).contains("set by the MCP transport"));
        assert!(err(config("bad name", "1")).contains("not a valid HTTP header name"));
        let crlf = err(config("X-Key", "${TOKEN}\r\nX-Evil: 1"));
        assert!(
            crlf.contains("control") && !crlf.contains("s3cret"),
            "{crlf}"
        );
        let long = err(config("X-Key", &"a".repeat(MAX_HEADER_VALUE_BYTES + 1)));
        assert!(long.contains("over the limit"), "{long}");
        assert!(
            config("X-Key", "${TOKEN}")
                .transport_config("http://x/mcp", env)
                .is_ok()
        );
        // Debug never shows a value.
        let shown = format!("{:?}", config("X-Key", "s3cret"));
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
