//! `web_fetch`: one URL, fetched under the [`WebConfig`]'s network policy
//! (rules, bounds and cache: the [module docs](crate::web)).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{CONTENT_ENCODING, CONTENT_TYPE, HeaderMap, LOCATION, RETRY_AFTER};
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};
use tool_rules::text::{Clip, clip};
use url::Url;

use super::body::{self, DEFAULT_MAX_LENGTH, MAX_LENGTH_LIMIT, Page};
use super::client::FetchClient;
use super::{FetchLimits, WebConfig};

/// Longest URL accepted, in bytes: 8 000 (RFC 9110 §4.1 recommends that
/// senders and recipients support at least 8 000 octets).
pub const MAX_URL_BYTES: usize = 8000;

/// Characters of an error answer's body quoted in the failure: 300.
const QUOTED_ERROR_CHARS: usize = 300;

/// Bytes of an error answer's body read to quote from it: 4 KiB.
const ERROR_BODY_BYTES: usize = 4096;

/// Fetches a URL and returns its content: HTML as Markdown, text and JSON as
/// they are, images as images, PDFs as documents.
///
/// Only hosts the person allowed can be fetched; local and private addresses
/// are refused. Results are cached for 15 minutes. Follows redirects.
///
/// # Arguments
/// * `url` - Absolute http:// or https:// URL.
/// * `max_length` - Most characters of text to return (default 20000, at most 50000).
/// * `offset` - Characters of the text to skip first (default 0), to read a long page in parts.
///
/// # Examples
/// ```json
/// {"url": "https://docs.rs/serde/latest/serde/"}
/// {"url": "https://example.com/report.pdf", "max_length": 20000}
/// {"url": "https://example.com/long-page", "offset": 50000}
/// ```
#[tool(
    kind = "network",
    tags = ["web"],
    read_only,
    open_world,
    concurrency_safe,
    timeout = "90s"
)]
pub async fn web_fetch(
    url: String,
    max_length: Option<std::num::NonZeroU64>,
    offset: Option<u64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let requested = parse_url(&url)?;
    let Some(config) = context.state::<WebConfig>() else {
        // Only a program using the library gets here (the `tool` CLI always
        // installs a config): name the call that allows hosts, not a flag.
        return Ok(body::failure(
            ErrorKind::Denied,
            "not_allowed",
            requested.as_str(),
            format!(
                "network access to {} refused: this program gave web_fetch no network \
                 configuration, so no host is allowed; the program allows hosts with \
                 `ToolContext::with_state(WebConfig::new(policy))`",
                authority(&requested)
            ),
        ));
    };
    let asked = max_length.map(std::num::NonZeroU64::get);
    let max_chars = asked.map_or(DEFAULT_MAX_LENGTH, |n| {
        usize::try_from(n).map_or(MAX_LENGTH_LIMIT, |n| n.min(MAX_LENGTH_LIMIT))
    });
    let skip = offset.map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX));
    let trace = context.trace_id().unwrap_or_default();
    let mut result = fetch(&config, trace, &requested, skip, max_chars).await;
    if let Some(n) = asked.filter(|&n| n > MAX_LENGTH_LIMIT as u64) {
        result.add_note(format!(
            "max_length {n} is over the limit; {MAX_LENGTH_LIMIT} characters (the most web_fetch \
             returns at once) were used"
        ));
    }
    Ok(result)
}

/// `url` parsed as an absolute http(s) URL, its fragment removed.
fn parse_url(url: &str) -> Result<Url, ToolError> {
    let invalid = |why: String| ToolError::new(ErrorKind::InvalidArguments, why);
    let trimmed = url.trim();
    if trimmed.len() > MAX_URL_BYTES {
        return Err(invalid(format!(
            "url is {} bytes long, over the limit of {MAX_URL_BYTES}",
            trimmed.len()
        )));
    }
    let mut parsed = Url::parse(trimmed).map_err(|e| {
        invalid(format!(
            "url {:?} is not an absolute URL ({e}); give one such as https://example.com/page",
            clip(trimmed, Clip::chars(200))
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "url uses the scheme `{}`; web_fetch fetches http:// and https:// URLs only",
            clip(parsed.scheme(), Clip::chars(40))
        )));
    }
    parsed.set_fragment(None);
    Ok(parsed)
}

/// Fetches `url` for `trace` (from the cache when it holds it) and renders
/// the result with at most `max_chars` characters of text, after the first
/// `skip`. Never fails:
/// every failure is a result naming what went wrong (`metadata.failure`).
pub(crate) async fn fetch(
    config: &WebConfig,
    trace: &str,
    url: &Url,
    skip: usize,
    max_chars: usize,
) -> ToolResult {
    let limit = config.limits().max_body_bytes;
    if let Some(page) = config.cache().get(trace, url.as_str()) {
        return body::render(&page, url.as_str(), skip, max_chars, true, limit);
    }
    let limits = *config.limits();
    let work = fetch_page(config, url.clone(), &limits);
    let outcome = match tokio::time::timeout(limits.total_timeout, work).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failed::new(
            ErrorKind::Timeout,
            "timeout",
            format!(
                "no complete answer from {} within {} s (web_fetch's time limit); the server is \
                 slow or not answering",
                authority(url),
                limits.total_timeout.as_secs_f64()
            ),
        )),
    };
    match outcome {
        Ok(page) => {
            let page = Arc::new(page);
            config.cache().put(trace, url.as_str(), page.clone());
            body::render(&page, url.as_str(), skip, max_chars, false, limit)
        }
        Err(f) => {
            let mut r = body::failure(f.kind, f.failure, url.as_str(), f.message);
            if let Some(status) = f.status {
                r = r.with_metadata(tool_core::meta::MetaKey::custom("status"), status);
            }
            if !f.redirects.is_empty() {
                r = r.with_metadata(tool_core::meta::MetaKey::custom("redirects"), f.redirects);
            }
            r
        }
    }
}

/// A failed fetch.
#[derive(Debug)]
struct Failed {
    kind: ErrorKind,
    failure: &'static str,
    message: String,
    status: Option<u16>,
    redirects: Vec<String>,
}

impl Failed {
    fn new(kind: ErrorKind, failure: &'static str, message: String) -> Self {
        Self {
            kind,
            failure,
            message,
            status: None,
            redirects: Vec::new(),
        }
    }
}

/// `host:port` of `url` for messages.
fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Follows `url` hop by hop, each hop checked, resolved once and pinned,
/// then reads and converts the body.
async fn fetch_page(
    config: &WebConfig,
    mut url: Url,
    limits: &FetchLimits,
) -> Result<Page, Failed> {
    let client = config
        .client()
        .map_err(|e| Failed::new(ErrorKind::Failed, "client", e))?;
    let mut seen: HashSet<String> = HashSet::from([url.to_string()]);
    let mut redirects: Vec<String> = Vec::new();
    let with_chain = |mut f: Failed, chain: &[String]| {
        f.redirects = chain.to_vec();
        f
    };
    loop {
        vet_and_pin(config, client, &url)
            .await
            .map_err(|f| with_chain(f, &redirects))?;
        let (response, retries) = send(client, &url, limits)
            .await
            .map_err(|f| with_chain(f, &redirects))?;
        let status = response.status();
        if status.is_redirection() && response.headers().contains_key(LOCATION) {
            let next = next_hop(&url, response.headers()).map_err(|f| with_chain(f, &redirects))?;
            redirects.push(next.to_string());
            if !seen.insert(next.to_string()) {
                let mut f = Failed::new(
                    ErrorKind::Failed,
                    "redirect_loop",
                    format!(
                        "redirect loop: {} redirects back to {} (hops: {})",
                        url,
                        next,
                        redirects.join(" -> ")
                    ),
                );
                f.status = Some(status.as_u16());
                return Err(with_chain(f, &redirects));
            }
            if redirects.len() > limits.max_redirects {
                let mut f = Failed::new(
                    ErrorKind::Failed,
                    "too_many_redirects",
                    format!(
                        "more than {} redirects (the limit); the last went to {next}",
                        limits.max_redirects
                    ),
                );
                f.status = Some(status.as_u16());
                return Err(with_chain(f, &redirects));
            }
            url = next;
            continue;
        }
        if !status.is_success() {
            let f = status_failure(response, retries, limits).await;
            return Err(with_chain(f, &redirects));
        }
        if let Some(f) = undecoded(response.headers()) {
            return Err(with_chain(f, &redirects));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let (bytes, cut) = read_body(response, content_type.as_deref(), limits.max_body_bytes)
            .await
            .map_err(|f| with_chain(f, &redirects))?;
        let len = bytes.len();
        let base = url.clone();
        let converted = tokio::task::spawn_blocking(move || {
            body::convert(bytes, content_type.as_deref(), cut, Some(&base))
        })
        .await
        .map_err(|e| {
            Failed::new(
                ErrorKind::Failed,
                "convert",
                format!("the page could not be converted ({e})"),
            )
        })?;
        let (content, content_type) = converted.map_err(|r| {
            with_chain(
                Failed::new(ErrorKind::Failed, r.failure, r.message),
                &redirects,
            )
        })?;
        return Ok(Page {
            url: url.to_string(),
            status: status.as_u16(),
            content_type,
            bytes: len,
            cut,
            redirects,
            content,
        });
    }
}

/// The failure for a body still encoded when it reaches us: the client
/// decodes `gzip`, `deflate` and `br` (and then drops the header), so a
/// `Content-Encoding` left on the answer is one it cannot decode (`zstd`,
/// `compress`, an unknown name); its bytes would be garbage as text.
/// `identity` is no encoding.
fn undecoded(headers: &HeaderMap) -> Option<Failed> {
    let value = headers.get(CONTENT_ENCODING)?;
    let text = String::from_utf8_lossy(value.as_bytes());
    let named: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"))
        .collect();
    if named.is_empty() {
        return None;
    }
    Some(Failed::new(
        ErrorKind::Failed,
        "encoding",
        format!(
            "the server sent the body with `Content-Encoding: {}`, which web_fetch cannot decode \
             (it decodes gzip, deflate and br)",
            clip(&named.join(", "), Clip::chars(80))
        ),
    ))
}

/// The policy's three steps for one hop: the URL matches a pattern, the host
/// resolves (once, on a blocking thread) to vetted addresses, and those are
/// pinned for the client's connection.
async fn vet_and_pin(config: &WebConfig, client: &FetchClient, url: &Url) -> Result<(), Failed> {
    let refused = |e: tool_core::NetworkRefusal| {
        use tool_core::governance::network::RefusalReason;
        let (reason, hint) = match e.reason() {
            RefusalReason::SpecialAddress { .. } => (
                "private_address",
                " (`--allow-net-private` in the `tool` CLI, `NetworkPolicy::allow_private` in a \
                 library)",
            ),
            RefusalReason::Unresolvable { .. } => ("unresolvable", ""),
            _ => ("not_allowed", ""),
        };
        Failed::new(ErrorKind::Denied, reason, format!("{e}{hint}"))
    };
    let policy = config.network().clone();
    let target = policy.check_url(url).map_err(refused)?;
    let host = target.host().to_owned();
    let literal = target.ip_literal().is_some();
    let addrs = tokio::task::spawn_blocking(move || policy.resolve_target(&target))
        .await
        .map_err(|e| {
            Failed::new(
                ErrorKind::Failed,
                "unresolvable",
                format!("the name lookup of {host} failed ({e})"),
            )
        })?
        .map_err(refused)?;
    if !literal {
        client.pin(&host, addrs);
    }
    Ok(())
}

/// The next hop of a redirect: `Location` resolved against `url`.
fn next_hop(url: &Url, headers: &HeaderMap) -> Result<Url, Failed> {
    let bad = |why: String| Failed::new(ErrorKind::Failed, "redirect", why);
    let location = headers
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| bad("a redirect without a readable Location header".to_owned()))?;
    let mut next = url.join(location).map_err(|e| {
        bad(format!(
            "the redirect's Location {:?} is not a URL ({e})",
            clip(location, Clip::chars(200))
        ))
    })?;
    next.set_fragment(None);
    Ok(next)
}

/// Whether an answer is worth retrying: 429 Too Many Requests, or 500,
/// 502, 503, 504 (RFC 9110 §15.6: server errors that may pass; not 501 or
/// 505, which do not).
fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504)
}

/// `Retry-After` as a wait: delay-seconds or an HTTP-date (RFC 9110
/// §10.2.3); a date in the past is no wait.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// GET `url`, retried after a 429 or 5xx answer (at most
/// `limits.max_retries` times, waiting what `Retry-After` asks when it is
/// at most `limits.max_retry_wait`, else not retrying). Returns the last
/// answer and how many retries were made.
async fn send(
    client: &FetchClient,
    url: &Url,
    limits: &FetchLimits,
) -> Result<(reqwest::Response, u32), Failed> {
    let started = Instant::now();
    let mut retries = 0u32;
    loop {
        let response = client
            .http
            .get(url.clone())
            .send()
            .await
            .map_err(|e| transport_failure(&e, url))?;
        let status = response.status();
        if !retryable(status) || retries >= limits.max_retries {
            return Ok((response, retries));
        }
        let wait = match retry_after(response.headers()) {
            Some(asked) if asked > limits.max_retry_wait => return Ok((response, retries)),
            Some(asked) => asked,
            None => limits
                .retry_backoff
                .saturating_mul(2u32.saturating_pow(retries)),
        };
        if started.elapsed() + wait >= limits.total_timeout {
            return Ok((response, retries));
        }
        drop(response);
        tokio::time::sleep(wait).await;
        retries += 1;
    }
}

/// What a failed connection or exchange says, by kind.
fn transport_failure(e: &reqwest::Error, url: &Url) -> Failed {
    let mut detail = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    let detail = clip(&detail, Clip::chars(400)).into_owned();
    let at = authority(url);
    if e.is_timeout() {
        Failed::new(
            ErrorKind::Timeout,
            "timeout",
            format!("{at} did not answer in time ({detail})"),
        )
    } else if e.is_connect() {
        Failed::new(
            ErrorKind::Failed,
            "unreachable",
            format!("could not connect to {at} ({detail})"),
        )
    } else {
        Failed::new(
            ErrorKind::Failed,
            "unreachable",
            format!("the exchange with {at} failed ({detail})"),
        )
    }
}

/// The failure for a non-2xx answer: the status, what the body starts with
/// (text only), the retries made and a `Retry-After` not waited for.
async fn status_failure(response: reqwest::Response, retries: u32, limits: &FetchLimits) -> Failed {
    let status = response.status();
    let asked = retry_after(response.headers());
    let is_text = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(body::essence)
        .is_some_and(|e| e.starts_with("text/") || e.contains("json") || e.contains("xml"));
    let mut message = format!("the server answered {status}");
    if retries > 0 {
        message.push_str(&format!(" after {retries} retries"));
    }
    if let Some(asked) = asked
        && retryable(status)
    {
        if asked > limits.max_retry_wait {
            message.push_str(&format!(
                "; it asks to retry after {} s, longer than web_fetch waits ({} s): try again later",
                asked.as_secs(),
                limits.max_retry_wait.as_secs()
            ));
        } else {
            message.push_str(&format!("; it asks to retry after {} s", asked.as_secs()));
        }
    }
    if is_text && let Ok((bytes, _)) = read_body(response, None, ERROR_BODY_BYTES as u64).await {
        let text = String::from_utf8_lossy(&bytes);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            message.push_str(&format!(
                ". The body begins: {}",
                clip(&text, Clip::chars(QUOTED_ERROR_CHARS))
            ));
        }
    }
    let mut f = Failed::new(ErrorKind::Failed, "status", message);
    f.status = Some(status.as_u16());
    f
}

/// Reads at most `max` bytes of the body; `true` when more was sent (the
/// rest is never read: the connection is dropped). A body that must be
/// whole (`content_type` an image or PDF) over `max` is refused, by its
/// `Content-Length` before reading when it declares one.
async fn read_body(
    mut response: reqwest::Response,
    content_type: Option<&str>,
    max: u64,
) -> Result<(Vec<u8>, bool), Failed> {
    let whole = body::needs_whole_body(content_type);
    let too_large = |size: String| {
        Failed::new(
            ErrorKind::Failed,
            "too_large",
            format!(
                "the response is {size}, over web_fetch's limit of {max} bytes; an image or PDF \
                 cannot be used cut, so it is not returned"
            ),
        )
    };
    let declared = response.content_length();
    if whole && let Some(len) = declared.filter(|&len| len > max) {
        return Err(too_large(format!("{len} bytes")));
    }
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    let mut bytes =
        Vec::with_capacity(declared.map_or(0, |d| usize::try_from(d.min(max)).unwrap_or(0)));
    let url = response.url().clone();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_failure(&e, &url))?
    {
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            if whole {
                return Err(too_large(format!("over {max} bytes")));
            }
            return Ok((bytes, true));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_before_any_network() {
        let e = parse_url("not a url").unwrap_err();
        assert!(
            e.message.contains("is not an absolute URL"),
            "{}",
            e.message
        );
        let e = parse_url("ftp://x.test/f").unwrap_err();
        assert!(e.message.contains("the scheme `ftp`"), "{}", e.message);
        let e = parse_url(&format!("http://x.test/{}", "a".repeat(MAX_URL_BYTES))).unwrap_err();
        assert!(
            e.message.contains("over the limit of 8000"),
            "{}",
            e.message
        );
        assert_eq!(
            parse_url(" https://x.test/a#frag ").unwrap().as_str(),
            "https://x.test/a"
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        let later = std::time::SystemTime::now() + Duration::from_secs(120);
        h.insert(RETRY_AFTER, httpdate::fmt_http_date(later).parse().unwrap());
        let wait = retry_after(&h).unwrap();
        assert!(
            wait > Duration::from_secs(110) && wait <= Duration::from_secs(120),
            "{wait:?}"
        );
        h.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
