//! [`NetworkPolicy`]: which hosts a tool's network traffic may reach — the one
//! policy shared by the sandbox's proxy and the web tools
//! (`../shared/design/cross-cutting.md` §5).
//!
//! A connection is allowed in three steps, each of which can refuse it with a
//! [`NetworkRefusal`] whose message a model or a person can act on:
//!
//! 1. **Host check** ([`NetworkPolicy::check_host`] for a bare `host:port`,
//!    such as an HTTPS `CONNECT`; [`NetworkPolicy::check_url`] when the whole
//!    URL is known, such as a plain-HTTP request or `web_fetch`): some allowed
//!    pattern (the [`UrlPattern`] grammar) must match. Two rules narrow the
//!    grammar for network use:
//!    - a pattern without a port allows only the standard web ports 80 and
//!      443; any other port must be named (`localhost:8080`,
//!      `git.example.com:8443`). So `github.com` never opens port 22 (SSH) or
//!      a database port on an allowed host;
//!    - IPv6 literals cannot be written in the pattern grammar; they are
//!      allowed only through `*` (web ports) or a name that resolves to them;
//!    - a pattern that restricts the path (`github.com/org/**`) matches only
//!      full URLs ([`NetworkPolicy::check_url`]); it never allows a bare
//!      `host:port`, because an HTTPS tunnel hides the path from the proxy.
//! 2. **Resolution, once** ([`NetworkPolicy::resolve`],
//!    [`NetworkPolicy::resolve_target`], [`NetworkPolicy::resolve_with`]):
//!    the name is looked up a single time and the answer is returned as
//!    [`SocketAddr`]s. The caller connects to exactly those addresses and
//!    never resolves the name again, so a DNS answer that changes between the
//!    check and the connection ("DNS rebinding") cannot redirect it.
//! 3. **Address vetting** ([`NetworkPolicy::vet_addresses`], applied by every
//!    `resolve*`): addresses in the special-purpose ranges below are dropped;
//!    when none is left the connection is refused. The ranges come from the
//!    IANA IPv4 and IPv6 Special-Purpose Address Registries
//!    (<https://www.iana.org/assignments/iana-ipv4-special-registry>,
//!    <https://www.iana.org/assignments/iana-ipv6-special-registry>,
//!    RFC 6890) plus multicast:
//!
//! | Range | What | Source |
//! |---|---|---|
//! | `0.0.0.0/8` | "this network" (`0.0.0.0` reaches the local host on Linux) | RFC 791, RFC 1122 §3.2.1.3 |
//! | `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` | private networks | RFC 1918 |
//! | `100.64.0.0/10` | shared address space (carrier-grade NAT) | RFC 6598 |
//! | `127.0.0.0/8` | loopback | RFC 1122 §3.2.1.3 |
//! | `169.254.0.0/16` | link-local (cloud metadata at `169.254.169.254`) | RFC 3927 |
//! | `192.0.0.0/24` | IETF protocol assignments | RFC 6890 §2.1 |
//! | `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24` | documentation | RFC 5737 |
//! | `198.18.0.0/15` | benchmarking | RFC 2544 |
//! | `224.0.0.0/4` | multicast | RFC 5771 |
//! | `240.0.0.0/4` | reserved, and `255.255.255.255` limited broadcast | RFC 1112 §4, RFC 919 §7 |
//! | `::` | unspecified | RFC 4291 §2.5.2 |
//! | `::1` | loopback | RFC 4291 §2.5.3 |
//! | `::ffff:0:0/96` | IPv4-mapped: judged as the IPv4 address inside | RFC 4291 §2.5.5.2 |
//! | `::/96` (other than `::`, `::1`) | IPv4-compatible, deprecated | RFC 4291 §2.5.5.1 |
//! | `64:ff9b::/96` | NAT64 well-known prefix: judged as the IPv4 address inside | RFC 6052 §2.1 |
//! | `64:ff9b:1::/48` | NAT64 local use | RFC 8215 |
//! | `100::/64` | discard-only | RFC 6666 |
//! | `2001::/32` | Teredo (tunnels to any IPv4 address) | RFC 4380 |
//! | `2001:db8::/32` | documentation | RFC 3849 |
//! | `2002::/16` | 6to4: judged as the IPv4 address inside | RFC 3056 §2 |
//! | `fc00::/7` | unique local | RFC 4193 |
//! | `fe80::/10` | link-local | RFC 4291 §2.5.6 |
//! | `fec0::/10` | site-local, deprecated | RFC 3879 |
//! | `ff00::/8` | multicast | RFC 4291 §2.7 |
//!
//! [`NetworkPolicy::allow_private`] lifts every one of these refusals except
//! multicast and broadcast (which TCP cannot use); tests that need a loopback
//! server set it explicitly.
//!
//! # Limits
//!
//! A host name is at most [`MAX_HOST_LEN`] bytes (RFC 1035 §2.3.4: 255 octets
//! on the wire, 253 characters written); a policy holds at most
//! [`MAX_NETWORK_PATTERNS`] patterns when built from untrusted text
//! ([`NetworkPolicy::try_allow`], [`NetworkPolicy::from_patterns`]); at most
//! [`MAX_RESOLVED_ADDRESSES`] addresses of one answer are kept.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use url::Url;

use super::url_pattern::{UrlPattern, UrlPatternError};

/// Longest host name accepted, in bytes: 253 (RFC 1035 §2.3.4 allows 255
/// octets in wire form, which is 253 characters written with dots). A longer
/// one is refused with [`RefusalReason::HostTooLong`].
pub const MAX_HOST_LEN: usize = 253;

/// Most patterns a policy built from untrusted text may hold: 256. Each
/// connection is checked against every pattern, so the bound also bounds that
/// work. [`NetworkPolicy::try_allow`] refuses the 257th.
pub const MAX_NETWORK_PATTERNS: usize = 256;

/// Most addresses kept from one DNS answer: 32. Further ones are ignored
/// (never connected to).
pub const MAX_RESOLVED_ADDRESSES: usize = 32;

/// The SSH port, named in refusals: git over `ssh://` cannot go through an
/// HTTP proxy.
const SSH_PORT: u16 = 22;

/// Which hosts may be contacted, and whether private addresses may be.
///
/// Default: nothing is allowed (the sandbox's network is off). Rules and
/// limits: module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    allow: Vec<UrlPattern>,
    allow_private: bool,
}

/// Why a policy could not be built from pattern text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkPolicyError {
    /// A pattern is not in the [`UrlPattern`] grammar.
    #[error("--allow-net: {0}")]
    Pattern(#[from] UrlPatternError),
    /// More than [`MAX_NETWORK_PATTERNS`] patterns.
    #[error(
        "--allow-net: {count} patterns, over the limit of {MAX_NETWORK_PATTERNS} \
         (MAX_NETWORK_PATTERNS); use wildcards such as `*.example.com` to cover many hosts"
    )]
    TooManyPatterns {
        /// How many patterns were given (at least the limit plus one).
        count: usize,
    },
}

/// A `host:port` that passed the host check ([`NetworkPolicy::check_host`]
/// or [`NetworkPolicy::check_url`]); the only input the `resolve_target*`
/// steps take, so an unchecked host cannot be resolved by mistake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Lower-case ASCII (punycode for Unicode names); an IPv6 literal without
    /// brackets.
    host: String,
    port: u16,
    literal: Option<IpAddr>,
}

impl Target {
    /// The host: lower-case ASCII (punycode for Unicode names), IPv6
    /// literals without brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address when the host is an IP literal (no resolution needed).
    pub fn ip_literal(&self) -> Option<IpAddr> {
        self.literal
    }
}

impl fmt::Display for Target {
    /// `host:port`, with brackets around an IPv6 literal (`[::1]:443`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_authority(f, &self.host, self.port)
    }
}

fn write_authority(f: &mut fmt::Formatter<'_>, host: &str, port: u16) -> fmt::Result {
    if host.contains(':') {
        write!(f, "[{host}]:{port}")
    } else {
        write!(f, "{host}:{port}")
    }
}

/// A special-purpose address range (module docs' table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressClass {
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 private networks.
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT.
    SharedCgnat,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `fec0::/10` (deprecated).
    SiteLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Documentation, benchmarking, protocol-assignment, reserved,
    /// discard-only, deprecated and tunnelling ranges.
    Reserved,
}

/// One special-purpose range an address fell in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialAddress {
    /// Its class.
    pub class: AddressClass,
    /// The range in CIDR notation, e.g. `"10.0.0.0/8"`.
    pub range: &'static str,
    /// Where the range is defined, e.g. `"RFC 1918"`.
    pub source: &'static str,
}

impl AddressClass {
    fn describe(self) -> &'static str {
        match self {
            Self::Unspecified => "unspecified (\"this host\")",
            Self::Loopback => "loopback",
            Self::Private => "private-network",
            Self::SharedCgnat => "shared (carrier-grade NAT)",
            Self::LinkLocal => "link-local",
            Self::UniqueLocal => "unique-local",
            Self::SiteLocal => "site-local",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Reserved => "reserved special-purpose",
        }
    }

    /// Whether `allow_private` lifts the refusal (all but multicast and
    /// broadcast, which TCP cannot use).
    fn liftable(self) -> bool {
        !matches!(self, Self::Multicast | Self::Broadcast)
    }
}

/// The special-purpose range `ip` belongs to, or `None` for an ordinary
/// public address. Table and sources: module docs. IPv4-mapped, NAT64 and
/// 6to4 IPv6 addresses are judged by the IPv4 address they carry.
pub fn classify_address(ip: IpAddr) -> Option<SpecialAddress> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn special(class: AddressClass, range: &'static str, source: &'static str) -> SpecialAddress {
    SpecialAddress {
        class,
        range,
        source,
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<SpecialAddress> {
    use AddressClass as C;
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, ..) => special(C::Unspecified, "0.0.0.0/8", "RFC 791, RFC 1122 §3.2.1.3"),
        (10, ..) => special(C::Private, "10.0.0.0/8", "RFC 1918"),
        (172, 16..=31, _) => special(C::Private, "172.16.0.0/12", "RFC 1918"),
        (192, 168, _) => special(C::Private, "192.168.0.0/16", "RFC 1918"),
        (100, 64..=127, _) => special(C::SharedCgnat, "100.64.0.0/10", "RFC 6598"),
        (127, ..) => special(C::Loopback, "127.0.0.0/8", "RFC 1122 §3.2.1.3"),
        (169, 254, _) => special(C::LinkLocal, "169.254.0.0/16", "RFC 3927"),
        (192, 0, 0) => special(C::Reserved, "192.0.0.0/24", "RFC 6890 §2.1"),
        (192, 0, 2) => special(C::Reserved, "192.0.2.0/24", "RFC 5737"),
        (198, 51, 100) => special(C::Reserved, "198.51.100.0/24", "RFC 5737"),
        (203, 0, 113) => special(C::Reserved, "203.0.113.0/24", "RFC 5737"),
        (198, 18..=19, _) => special(C::Reserved, "198.18.0.0/15", "RFC 2544"),
        (224..=239, ..) => special(C::Multicast, "224.0.0.0/4", "RFC 5771"),
        _ if ip == Ipv4Addr::BROADCAST => special(C::Broadcast, "255.255.255.255/32", "RFC 919 §7"),
        (240..=255, ..) => special(C::Reserved, "240.0.0.0/4", "RFC 1112 §4"),
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<SpecialAddress> {
    use AddressClass as C;
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_unspecified() {
        return Some(special(C::Unspecified, "::/128", "RFC 4291 §2.5.2"));
    }
    if ip.is_loopback() {
        return Some(special(C::Loopback, "::1/128", "RFC 4291 §2.5.3"));
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if s[..6] == [0; 6] {
        return Some(special(C::Reserved, "::/96", "RFC 4291 §2.5.5.1"));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return Some(special(C::Reserved, "64:ff9b:1::/48", "RFC 8215"));
    }
    if s[..4] == [0x100, 0, 0, 0] {
        return Some(special(C::Reserved, "100::/64", "RFC 6666"));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(special(C::Reserved, "2001::/32", "RFC 4380"));
    }
    if s[0] == 0x2001 && s[1] == 0xdb8 {
        return Some(special(C::Reserved, "2001:db8::/32", "RFC 3849"));
    }
    if s[0] == 0x2002 {
        return classify_v4(embedded(s[1], s[2]));
    }
    Some(match s[0] {
        0xfc00..=0xfdff => special(C::UniqueLocal, "fc00::/7", "RFC 4193"),
        0xfe80..=0xfebf => special(C::LinkLocal, "fe80::/10", "RFC 4291 §2.5.6"),
        0xfec0..=0xfeff => special(C::SiteLocal, "fec0::/10", "RFC 3879"),
        0xff00..=0xffff => special(C::Multicast, "ff00::/8", "RFC 4291 §2.7"),
        _ => return None,
    })
}

/// Why a connection was refused. Its `Display` is one model-readable line
/// that names the host and says how a person can allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkRefusal {
    host: String,
    port: u16,
    reason: RefusalReason,
}

/// What a [`NetworkRefusal`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The host name is over [`MAX_HOST_LEN`] bytes (the refusal's host is
    /// then empty).
    HostTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The host is not a valid host name or IP literal.
    InvalidHost,
    /// A URL with a scheme other than `http`/`https`, or with user info.
    UnsupportedUrl {
        /// What is wrong, e.g. "the scheme `ftp` is not http or https".
        detail: String,
    },
    /// No allowed pattern matches.
    NotAllowed,
    /// Port 22 (SSH) with no pattern naming it: git over `ssh://` cannot go
    /// through the sandbox's HTTP proxy.
    SshPort,
    /// Every address the host resolved to (or the IP literal) is in a
    /// special-purpose range.
    SpecialAddress {
        /// The first refused address.
        addr: IpAddr,
        /// Its range.
        range: SpecialAddress,
    },
    /// The name did not resolve.
    Unresolvable {
        /// The resolver's error.
        detail: String,
    },
}

impl NetworkRefusal {
    /// The refused host as given (normalised when it parsed; empty for
    /// [`RefusalReason::HostTooLong`]).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The refused port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Why.
    pub fn reason(&self) -> &RefusalReason {
        &self.reason
    }

    /// `host:port` as the metadata lists it (`network.refused`).
    pub fn authority(&self) -> String {
        Authority(&self.host, self.port).to_string()
    }

    fn new(host: &str, port: u16, reason: RefusalReason) -> Self {
        Self {
            host: host.to_owned(),
            port,
            reason,
        }
    }
}

struct Authority<'a>(&'a str, u16);

impl fmt::Display for Authority<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_authority(f, self.0, self.1)
    }
}

impl fmt::Display for NetworkRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = &self.host;
        let port = self.port;
        let at = Authority(host, port);
        match &self.reason {
            RefusalReason::HostTooLong { len } => write!(
                f,
                "network access refused: the host name is {len} bytes long, over the limit of \
                 {MAX_HOST_LEN} (MAX_HOST_LEN)"
            ),
            RefusalReason::InvalidHost => write!(
                f,
                "network access refused: {host:?} is not a valid host name or IP address"
            ),
            // A URL without a host (`file:///etc/passwd`) has no authority
            // worth naming (it would read `:0`).
            RefusalReason::UnsupportedUrl { detail } if host.is_empty() => {
                write!(f, "network access refused: {detail}")
            }
            RefusalReason::UnsupportedUrl { detail } => {
                write!(f, "network access to {at} refused: {detail}")
            }
            RefusalReason::NotAllowed if host.contains(':') => write!(
                f,
                "network access to {at} refused: no allowed host pattern matches it (IPv6 \
                 literals cannot be named in a pattern; a person can allow a host name that \
                 resolves to it with `--allow-net NAME`)"
            ),
            // A link-local literal (169.254.169.254, fe80::…) is where cloud
            // metadata services answer with credentials: refuse without
            // telling the model which switches would open it.
            RefusalReason::NotAllowed
                if host.parse::<IpAddr>().is_ok_and(|ip| {
                    classify_address(ip).is_some_and(|r| r.class == AddressClass::LinkLocal)
                }) =>
            {
                write!(
                    f,
                    "network access to {at} refused: it is a link-local address (where cloud \
                     metadata services answer), which no allowed host pattern matches"
                )
            }
            RefusalReason::NotAllowed => {
                // A loopback or private literal (or `localhost`) needs the
                // private-address switch too: say both at once.
                let private = host.eq_ignore_ascii_case("localhost")
                    || host
                        .parse::<IpAddr>()
                        .is_ok_and(|ip| classify_address(ip).is_some());
                write!(
                    f,
                    "network access to {at} refused: no allowed host pattern matches it; a person \
                     can allow it with `--allow-net {}`{}",
                    suggested_pattern(host, port),
                    if private {
                        " together with `--allow-net-private` (it is a loopback or private address)"
                    } else {
                        ""
                    }
                )
            }
            RefusalReason::SshPort => write!(
                f,
                "network access to {at} refused: port 22 is SSH, which cannot go through the \
                 sandbox's HTTP proxy (git over ssh:// is refused); use an https:// remote \
                 (`git remote set-url origin https://{host}/OWNER/REPO.git`) and have a person \
                 allow it with `--allow-net {host}`"
            ),
            RefusalReason::SpecialAddress { addr, range } => write!(
                f,
                "network access to {at} refused: it is (or resolves to) {addr}, a {} address \
                 ({}, {}); such addresses reach the machine itself or its local network and are \
                 refused even for allowed hosts unless the configuration allows private addresses",
                range.class.describe(),
                range.range,
                range.source
            ),
            RefusalReason::Unresolvable { detail } => write!(
                f,
                "network access to {at} refused: the host name does not resolve ({detail})"
            ),
        }
    }
}

impl std::error::Error for NetworkRefusal {}

/// The `--allow-net` pattern a refusal suggests: the host, with the port
/// when it is not 80 or 443.
fn suggested_pattern(host: &str, port: u16) -> String {
    if is_web_port(port) {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    }
}

fn is_web_port(port: u16) -> bool {
    port == 80 || port == 443
}

impl NetworkPolicy {
    /// A policy that allows nothing (the default).
    pub fn deny_all() -> Self {
        Self::default()
    }

    /// Adds an allowed host pattern (the URL-pattern grammar of
    /// [`UrlPattern`], e.g. `*.crates.io` or `https://registry.npmjs.org`).
    /// For patterns from code; untrusted text goes through
    /// [`NetworkPolicy::try_allow`], which also enforces
    /// [`MAX_NETWORK_PATTERNS`]. How patterns match: module docs.
    #[must_use]
    pub fn allow(mut self, pattern: UrlPattern) -> Self {
        self.allow.push(pattern);
        self
    }

    /// Parses `pattern` and adds it.
    ///
    /// # Errors
    /// [`NetworkPolicyError::Pattern`] when it is not in the grammar,
    /// [`NetworkPolicyError::TooManyPatterns`] when the policy already holds
    /// [`MAX_NETWORK_PATTERNS`].
    pub fn try_allow(self, pattern: &str) -> Result<Self, NetworkPolicyError> {
        if self.allow.len() >= MAX_NETWORK_PATTERNS {
            return Err(NetworkPolicyError::TooManyPatterns {
                count: self.allow.len() + 1,
            });
        }
        Ok(self.allow(UrlPattern::parse(pattern)?))
    }

    /// A policy allowing each of `patterns` (e.g. the values of repeated
    /// `--allow-net` flags); private addresses stay refused.
    ///
    /// # Errors
    /// As [`NetworkPolicy::try_allow`], for the first bad pattern.
    pub fn from_patterns<I, S>(patterns: I) -> Result<Self, NetworkPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        patterns
            .into_iter()
            .try_fold(Self::deny_all(), |policy, p| policy.try_allow(p.as_ref()))
    }

    /// Allows private, loopback and link-local addresses (refused by default
    /// even when the host name matches a pattern). Tests that need a loopback
    /// server set this explicitly. Lifts every range of the module docs'
    /// table except multicast and broadcast.
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// The allowed host patterns, in the order added.
    pub fn patterns(&self) -> &[UrlPattern] {
        &self.allow
    }

    /// Whether private, loopback and link-local addresses may be contacted.
    pub fn private_allowed(&self) -> bool {
        self.allow_private
    }

    /// Whether any host at all may be contacted.
    pub fn is_deny_all(&self) -> bool {
        self.allow.is_empty()
    }

    /// Checks a bare `host:port` (an HTTPS `CONNECT`, a git or package
    /// registry host): some pattern without a path restriction must match
    /// it, with the port rule of the module docs (no port in the pattern:
    /// 80 and 443 only). `host` may be a name (Unicode names are converted
    /// to punycode), an IPv4 literal or an IPv6 literal with or without
    /// brackets. Addresses are not looked at here: see
    /// [`NetworkPolicy::resolve_target`].
    ///
    /// # Errors
    /// [`RefusalReason::HostTooLong`], [`RefusalReason::InvalidHost`],
    /// [`RefusalReason::SshPort`] (port 22 not named by a pattern) or
    /// [`RefusalReason::NotAllowed`].
    pub fn check_host(&self, host: &str, port: u16) -> Result<Target, NetworkRefusal> {
        let target = parse_target(host, port)?;
        let url_for = |scheme: &str| {
            Url::parse(&format!("{scheme}://{}/", Authority(&target.host, port))).ok()
        };
        let urls = [url_for("http"), url_for("https")];
        let allowed = self.allow.iter().any(|p| {
            !p.restricts_path()
                && port_allowed(p, port)
                && urls.iter().flatten().any(|u| p.matches(u))
        });
        if allowed {
            Ok(target)
        } else {
            Err(self.not_allowed(&target.host, port))
        }
    }

    /// Checks a whole URL (a plain-HTTP request through the proxy,
    /// `web_fetch`): scheme `http` or `https`, no user info, and some pattern
    /// matching the URL (path included) under the port rule of the module
    /// docs. The port is the URL's, or its scheme's default.
    ///
    /// # Errors
    /// [`RefusalReason::UnsupportedUrl`] for another scheme or user info,
    /// then as [`NetworkPolicy::check_host`].
    pub fn check_url(&self, url: &Url) -> Result<Target, NetworkRefusal> {
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(0);
        let unsupported = |detail: String| {
            Err(NetworkRefusal::new(
                host,
                port,
                RefusalReason::UnsupportedUrl { detail },
            ))
        };
        if !matches!(url.scheme(), "http" | "https") {
            return unsupported(format!(
                "the scheme `{}` is not http or https, the only ones allowed",
                url.scheme()
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return unsupported("URLs with user info (`user@host`) are refused".to_owned());
        }
        let target = parse_target(host, port)?;
        let allowed = self
            .allow
            .iter()
            .any(|p| port_allowed(p, port) && p.matches(url));
        if allowed {
            Ok(target)
        } else {
            Err(self.not_allowed(&target.host, port))
        }
    }

    fn not_allowed(&self, host: &str, port: u16) -> NetworkRefusal {
        let reason = if port == SSH_PORT {
            RefusalReason::SshPort
        } else {
            RefusalReason::NotAllowed
        };
        NetworkRefusal::new(host, port, reason)
    }

    /// [`NetworkPolicy::check_host`], then [`NetworkPolicy::resolve_target`]:
    /// the addresses to connect to, each vetted. Blocking (the system
    /// resolver); async callers run it on a blocking thread.
    ///
    /// # Errors
    /// Any refusal of the two steps.
    pub fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, NetworkRefusal> {
        let target = self.check_host(host, port)?;
        self.resolve_target(&target)
    }

    /// Resolves a checked target once with the system resolver
    /// (`getaddrinfo`, blocking) and vets the answer
    /// ([`NetworkPolicy::vet_addresses`]). Connect to the returned addresses
    /// and never resolve the name again (module docs: DNS rebinding).
    ///
    /// # Errors
    /// [`RefusalReason::Unresolvable`], [`RefusalReason::SpecialAddress`].
    pub fn resolve_target(&self, target: &Target) -> Result<Vec<SocketAddr>, NetworkRefusal> {
        self.resolve_with(target, |host, port| {
            (host, port).to_socket_addrs().map(Iterator::collect)
        })
    }

    /// As [`NetworkPolicy::resolve_target`] with another resolver (an async
    /// one run beforehand, a test double). `lookup` is called at most once,
    /// and not at all for an IP literal.
    ///
    /// # Errors
    /// As [`NetworkPolicy::resolve_target`].
    pub fn resolve_with<F>(
        &self,
        target: &Target,
        lookup: F,
    ) -> Result<Vec<SocketAddr>, NetworkRefusal>
    where
        F: FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>>,
    {
        let addrs = match target.literal {
            Some(ip) => vec![SocketAddr::new(ip, target.port)],
            None => lookup(&target.host, target.port).map_err(|e| {
                NetworkRefusal::new(
                    &target.host,
                    target.port,
                    RefusalReason::Unresolvable {
                        detail: e.to_string(),
                    },
                )
            })?,
        };
        self.vet_addresses(target, addrs)
    }

    /// Keeps the addresses of `addrs` (at most [`MAX_RESOLVED_ADDRESSES`],
    /// in order) that are not in a refused range, with the target's port.
    ///
    /// # Errors
    /// [`RefusalReason::SpecialAddress`] naming the first refused address
    /// when none is left, [`RefusalReason::Unresolvable`] when `addrs` is
    /// empty.
    pub fn vet_addresses<I>(
        &self,
        target: &Target,
        addrs: I,
    ) -> Result<Vec<SocketAddr>, NetworkRefusal>
    where
        I: IntoIterator<Item = SocketAddr>,
    {
        let mut kept = Vec::new();
        let mut first_refused = None;
        let mut seen = 0usize;
        for addr in addrs.into_iter().take(MAX_RESOLVED_ADDRESSES) {
            seen += 1;
            let ip = addr.ip();
            match classify_address(ip) {
                Some(range) if !(self.allow_private && range.class.liftable()) => {
                    first_refused.get_or_insert((ip, range));
                }
                _ => kept.push(SocketAddr::new(ip, target.port)),
            }
        }
        if !kept.is_empty() {
            return Ok(kept);
        }
        let reason = match first_refused {
            Some((addr, range)) => RefusalReason::SpecialAddress { addr, range },
            None => RefusalReason::Unresolvable {
                detail: format!("the resolver returned {seen} addresses"),
            },
        };
        Err(NetworkRefusal::new(&target.host, target.port, reason))
    }
}

/// Whether `p`'s port rule allows `port`: the port it names, or 80/443 when
/// it names none.
fn port_allowed(p: &UrlPattern, port: u16) -> bool {
    p.port().map_or(is_web_port(port), |named| named == port)
}

/// Validates and normalises a host: length, characters, then the URL
/// parser's host rules (IDNA to punycode, IP literals).
fn parse_target(host: &str, port: u16) -> Result<Target, NetworkRefusal> {
    if host.len() > MAX_HOST_LEN {
        return Err(NetworkRefusal::new(
            "",
            port,
            RefusalReason::HostTooLong { len: host.len() },
        ));
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let invalid = || NetworkRefusal::new(host, port, RefusalReason::InvalidHost);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(Target {
            host: ip.to_string(),
            port,
            literal: Some(ip),
        });
    }
    // Only what a host name can hold: letters (any script, for IDNA),
    // digits, `-`, `_` and `.`; no `/ ? # @ :` that would make the URL parser
    // read another host, no whitespace or control characters.
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    if bare.is_empty() || !bare.chars().all(name_char) {
        return Err(invalid());
    }
    let url = Url::parse(&format!("http://{bare}/")).map_err(|_| invalid())?;
    let Some(parsed) = url.host() else {
        return Err(invalid());
    };
    let (host, literal) = match parsed {
        url::Host::Domain(d) => (d.trim_end_matches('.').to_owned(), None),
        // `http://0x7f.1/` parses as 127.0.0.1: keep the address, so that the
        // vetting step sees it.
        url::Host::Ipv4(ip) => (ip.to_string(), Some(IpAddr::V4(ip))),
        url::Host::Ipv6(ip) => (ip.to_string(), Some(IpAddr::V6(ip))),
    };
    if host.is_empty() || host.len() > MAX_HOST_LEN {
        return Err(invalid());
    }
    Ok(Target {
        host,
        port,
        literal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(patterns: &[&str]) -> NetworkPolicy {
        NetworkPolicy::from_patterns(patterns).unwrap()
    }

    fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(a, b, c, d))
    }

    #[test]
    fn hosts_match_patterns_with_the_web_port_rule() {
        let p = policy(&["*.crates.io", "registry.npmjs.org", "localhost:8080"]);
        assert_eq!(
            p.check_host("static.crates.io", 443).unwrap().host(),
            "static.crates.io"
        );
        assert!(p.check_host("INDEX.Crates.IO", 443).is_ok());
        assert!(p.check_host("crates.io", 443).is_err());
        assert!(p.check_host("registry.npmjs.org", 80).is_ok());
        // No port in the pattern: 80 and 443 only.
        let e = p.check_host("registry.npmjs.org", 5432).unwrap_err();
        assert_eq!(e.reason(), &RefusalReason::NotAllowed);
        assert!(
            e.to_string()
                .contains("`--allow-net registry.npmjs.org:5432`"),
            "{e}"
        );
        assert!(p.check_host("localhost", 8080).is_ok());
        assert!(p.check_host("localhost", 443).is_err());
        assert!(p.check_host("evil.test", 443).is_err());
        assert!(
            NetworkPolicy::deny_all()
                .check_host("crates.io", 443)
                .is_err()
        );
    }

    #[test]
    fn ssh_is_refused_with_a_note() {
        let p = policy(&["github.com"]);
        let e = p.check_host("github.com", 22).unwrap_err();
        assert_eq!(e.reason(), &RefusalReason::SshPort);
        let text = e.to_string();
        assert!(text.contains("git over ssh:// is refused"), "{text}");
        assert!(text.contains("https://github.com/OWNER/REPO.git"), "{text}");
        // Naming the port explicitly is a person's decision.
        assert!(
            policy(&["github.com:22"])
                .check_host("github.com", 22)
                .is_ok()
        );
    }

    #[test]
    fn path_patterns_allow_urls_but_never_bare_hosts() {
        let p = policy(&["https://github.com/rust-lang/**"]);
        let ok = Url::parse("https://github.com/rust-lang/cargo").unwrap();
        assert_eq!(p.check_url(&ok).unwrap().to_string(), "github.com:443");
        let other = Url::parse("https://github.com/evil/x").unwrap();
        assert!(p.check_url(&other).is_err());
        assert!(p.check_host("github.com", 443).is_err());
    }

    #[test]
    fn urls_with_other_schemes_or_user_info_are_refused() {
        let p = policy(&["*"]);
        let e = p
            .check_url(&Url::parse("ftp://x.test/").unwrap())
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("the scheme `ftp` is not http or https"),
            "{e}"
        );
        let e = p
            .check_url(&Url::parse("http://a.test@b.test/").unwrap())
            .unwrap_err();
        assert!(matches!(e.reason(), RefusalReason::UnsupportedUrl { .. }));
        assert!(p.check_url(&Url::parse("http://b.test/x").unwrap()).is_ok());
    }

    #[test]
    fn bad_and_long_hosts_are_refused() {
        let p = policy(&["*"]);
        for host in [
            "",
            "a b",
            "a/b",
            "evil.test/@good.test",
            "a@b",
            "x\n",
            "a?b",
            "a#b",
        ] {
            let e = p.check_host(host, 443).unwrap_err();
            assert_eq!(e.reason(), &RefusalReason::InvalidHost, "{host:?}");
        }
        let long = format!("{}.test", "a".repeat(MAX_HOST_LEN));
        let e = p.check_host(&long, 443).unwrap_err();
        assert_eq!(
            e.reason(),
            &RefusalReason::HostTooLong {
                len: MAX_HOST_LEN + 5
            }
        );
        assert!(e.to_string().contains("over the limit of 253"), "{e}");
        assert!(
            !e.to_string().contains("aaaa"),
            "the long host is not echoed"
        );
        // Unicode names become punycode.
        assert_eq!(
            p.check_host("bücher.de", 443).unwrap().host(),
            "xn--bcher-kva.de"
        );
    }

    #[test]
    fn pattern_count_is_bounded() {
        let many: Vec<String> = (0..MAX_NETWORK_PATTERNS)
            .map(|i| format!("h{i}.test"))
            .collect();
        let p = NetworkPolicy::from_patterns(&many).unwrap();
        assert_eq!(p.patterns().len(), MAX_NETWORK_PATTERNS);
        assert_eq!(
            p.try_allow("one-more.test").unwrap_err(),
            NetworkPolicyError::TooManyPatterns { count: 257 }
        );
        let e = NetworkPolicy::from_patterns(["ok.test", "go*gle.com"]).unwrap_err();
        assert!(matches!(e, NetworkPolicyError::Pattern(_)));
    }

    #[test]
    fn a_private_literal_refusal_names_both_switches() {
        let policy = NetworkPolicy::from_patterns(["example.com"]).unwrap();
        let loopback = policy
            .check_host("127.0.0.1", 8765)
            .unwrap_err()
            .to_string();
        assert!(
            loopback.ends_with(
                "`--allow-net 127.0.0.1:8765` together with `--allow-net-private` (it is a loopback or private address)"
            ),
            "{loopback}"
        );
        let public = policy
            .check_host("example.org", 443)
            .unwrap_err()
            .to_string();
        assert!(!public.contains("--allow-net-private"), "{public}");
    }

    #[test]
    fn a_link_local_refusal_does_not_say_how_to_allow_it() {
        let policy = NetworkPolicy::from_patterns(["example.com"]).unwrap();
        let text = policy
            .check_host("169.254.169.254", 80)
            .unwrap_err()
            .to_string();
        assert_eq!(
            text,
            "network access to 169.254.169.254:80 refused: it is a link-local address (where \
             cloud metadata services answer), which no allowed host pattern matches"
        );
    }

    #[test]
    fn a_url_without_a_host_is_refused_without_an_authority() {
        let p = policy(&["*"]);
        let e = p
            .check_url(&Url::parse("file:///etc/passwd").unwrap())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "network access refused: the scheme `file` is not http or https, the only ones allowed"
        );
    }

    #[test]
    fn special_ranges_are_classified() {
        let class = |ip: IpAddr| classify_address(ip).map(|s| s.class);
        use AddressClass as C;
        assert_eq!(class(v4(127, 0, 0, 1)), Some(C::Loopback));
        assert_eq!(class(v4(0, 0, 0, 0)), Some(C::Unspecified));
        assert_eq!(class(v4(10, 1, 2, 3)), Some(C::Private));
        assert_eq!(class(v4(172, 31, 255, 255)), Some(C::Private));
        assert_eq!(class(v4(172, 32, 0, 1)), None);
        assert_eq!(class(v4(192, 168, 0, 1)), Some(C::Private));
        assert_eq!(class(v4(100, 64, 0, 1)), Some(C::SharedCgnat));
        assert_eq!(class(v4(100, 127, 255, 255)), Some(C::SharedCgnat));
        assert_eq!(class(v4(100, 128, 0, 1)), None);
        assert_eq!(class(v4(169, 254, 169, 254)), Some(C::LinkLocal));
        assert_eq!(class(v4(224, 0, 0, 1)), Some(C::Multicast));
        assert_eq!(class(v4(255, 255, 255, 255)), Some(C::Broadcast));
        assert_eq!(class(v4(240, 0, 0, 1)), Some(C::Reserved));
        assert_eq!(class(v4(198, 18, 0, 1)), Some(C::Reserved));
        assert_eq!(class(v4(8, 8, 8, 8)), None);
        assert_eq!(class(v4(1, 1, 1, 1)), None);
        let v6 = |s: &str| class(s.parse().unwrap());
        assert_eq!(v6("::1"), Some(C::Loopback));
        assert_eq!(v6("::"), Some(C::Unspecified));
        assert_eq!(v6("fd00::1"), Some(C::UniqueLocal));
        assert_eq!(v6("fe80::1"), Some(C::LinkLocal));
        assert_eq!(v6("fec0::1"), Some(C::SiteLocal));
        assert_eq!(v6("ff02::1"), Some(C::Multicast));
        assert_eq!(v6("2001:db8::1"), Some(C::Reserved));
        assert_eq!(v6("2001:0:4136:e378::1"), Some(C::Reserved));
        assert_eq!(v6("2606:4700:4700::1111"), None);
        // Mapped and embedded IPv4 forms are judged by the IPv4 inside.
        assert_eq!(v6("::ffff:127.0.0.1"), Some(C::Loopback));
        assert_eq!(v6("::ffff:10.0.0.1"), Some(C::Private));
        assert_eq!(v6("::ffff:8.8.8.8"), None);
        assert_eq!(v6("64:ff9b::a9fe:a9fe"), Some(C::LinkLocal));
        assert_eq!(v6("64:ff9b::808:808"), None);
        assert_eq!(v6("2002:7f00:1::"), Some(C::Loopback));
        assert_eq!(v6("::127.0.0.1"), Some(C::Reserved));
    }

    #[test]
    fn private_literals_are_refused_unless_allowed() {
        let p = policy(&["127.0.0.1:8080", "169.254.169.254", "*"]);
        for (host, port) in [
            ("127.0.0.1", 8080),
            ("::1", 443),
            ("[::1]", 80),
            ("169.254.169.254", 80),
        ] {
            let target = p.check_host(host, port).unwrap();
            let e = p.resolve_target(&target).unwrap_err();
            assert!(
                matches!(e.reason(), RefusalReason::SpecialAddress { .. }),
                "{host}"
            );
            assert!(
                e.to_string()
                    .contains("unless the configuration allows private"),
                "{e}"
            );
        }
        let open = p.clone().allow_private(true);
        assert_eq!(
            open.resolve("127.0.0.1", 8080).unwrap(),
            vec![SocketAddr::new(v4(127, 0, 0, 1), 8080)]
        );
        // Even with private addresses allowed, the host pattern still applies.
        assert!(open.resolve("127.0.0.1", 8081).is_err());
        // Multicast is never allowed.
        let multi = policy(&["224.0.0.1"]).allow_private(true);
        assert!(multi.resolve("224.0.0.1", 80).is_err());
    }

    #[test]
    fn obfuscated_ipv4_forms_are_seen_as_addresses() {
        // The URL parser reads `0x7f.1` and `2130706433` as 127.0.0.1.
        let p = policy(&["*"]);
        for host in ["0x7f.1", "2130706433", "127.1"] {
            let t = p.check_host(host, 443).unwrap();
            assert_eq!(t.ip_literal(), Some(v4(127, 0, 0, 1)), "{host}");
            assert!(p.resolve_target(&t).is_err(), "{host}");
        }
    }

    #[test]
    fn names_resolving_to_private_addresses_are_refused() {
        let p = policy(&["*.test"]);
        let t = p.check_host("inside.test", 443).unwrap();
        let answer = vec![SocketAddr::new(v4(10, 0, 0, 7), 0)];
        let e = p.resolve_with(&t, |_, _| Ok(answer.clone())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "network access to inside.test:443 refused: it is (or resolves to) 10.0.0.7, a \
             private-network address (10.0.0.0/8, RFC 1918); such addresses reach the machine \
             itself or its local network and are refused even for allowed hosts unless the \
             configuration allows private addresses"
        );
        // Mixed answers keep only the public addresses, with the target's port.
        let mixed = vec![
            SocketAddr::new("::ffff:127.0.0.1".parse().unwrap(), 1),
            SocketAddr::new(v4(93, 184, 215, 14), 1),
        ];
        assert_eq!(
            p.resolve_with(&t, |_, _| Ok(mixed)).unwrap(),
            vec![SocketAddr::new(v4(93, 184, 215, 14), 443)]
        );
        let e = p
            .resolve_with(&t, |_, _| Err(io::Error::other("NXDOMAIN")))
            .unwrap_err();
        assert!(e.to_string().contains("does not resolve (NXDOMAIN)"), "{e}");
    }

    #[test]
    fn resolution_happens_once_so_rebinding_cannot_redirect() {
        // A rebinding resolver: public on the first answer, loopback after.
        let p = policy(&["rebind.test"]);
        let t = p.check_host("rebind.test", 443).unwrap();
        let calls = std::cell::Cell::new(0);
        let lookup = |_: &str, _: u16| {
            calls.set(calls.get() + 1);
            let ip = if calls.get() == 1 {
                v4(93, 184, 215, 14)
            } else {
                v4(127, 0, 0, 1)
            };
            Ok(vec![SocketAddr::new(ip, 443)])
        };
        let addrs = p.resolve_with(&t, lookup).unwrap();
        assert_eq!(calls.get(), 1);
        // What the caller connects to is the vetted address itself, not a
        // name to look up again.
        assert_eq!(addrs, vec![SocketAddr::new(v4(93, 184, 215, 14), 443)]);
        // IP literals are never looked up.
        let lit = policy(&["8.8.8.8"]).check_host("8.8.8.8", 443).unwrap();
        let never =
            |_: &str, _: u16| -> io::Result<Vec<SocketAddr>> { Err(io::Error::other("called")) };
        assert!(policy(&["8.8.8.8"]).resolve_with(&lit, never).is_ok());
    }

    #[test]
    fn answers_are_bounded() {
        let p = policy(&["many.test"]);
        let t = p.check_host("many.test", 80).unwrap();
        let answer: Vec<SocketAddr> = (0..100u8)
            .map(|i| SocketAddr::new(v4(93, 184, 0, i), 80))
            .collect();
        assert_eq!(
            p.resolve_with(&t, |_, _| Ok(answer)).unwrap().len(),
            MAX_RESOLVED_ADDRESSES
        );
    }
}
