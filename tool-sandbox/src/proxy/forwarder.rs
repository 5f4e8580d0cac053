//! The namespace side: loopback up, and a plain blocking relay from
//! `127.0.0.1:<port>` / `[::1]:<port>` to the host proxy's Unix socket.
//!
//! No tokio and no global state: everything here can run in a process forked
//! by the sandbox supervisor inside the new network namespace.
//! [`bring_up_loopback`] makes only async-signal-safe system calls (it may run
//! between `fork` and `exec`); [`Forwarder::serve`] starts threads, so it
//! must run in a process that was single-threaded when it was forked (the
//! supervisor's child) or after an `exec`.

use std::io::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The port the forwarder listens on inside the namespace by default: 3128
/// (the customary HTTP proxy port; the namespace is private, so it is free).
pub const DEFAULT_FORWARDER_PORT: u16 = 3128;

/// Most connections the forwarder relays at once: 64 (as
/// [`super::ProxyLimits::max_connections`]'s default). Further ones are
/// closed at once.
pub const MAX_FORWARDED_CONNECTIONS: usize = 64;

/// Sets the `IFF_UP` flag of the loopback interface `lo` of the current
/// network namespace (a new namespace starts with it down, so not even
/// `127.0.0.1` works), as `ip link set lo up` does: `SIOCGIFFLAGS` then
/// `SIOCSIFFLAGS` on an `AF_INET` datagram socket (netdevice(7)).
///
/// Needs `CAP_NET_ADMIN` in the user namespace owning the network namespace:
/// call it after `unshare(CLONE_NEWUSER | CLONE_NEWNET)` and before `exec`
/// (an `exec` by a process whose user ID is unmapped drops capabilities).
/// Async-signal-safe (system calls only, no allocation), so it may run in a
/// `pre_exec` hook.
///
/// # Errors
/// The failing system call's error (`EPERM` without the capability).
#[allow(
    unsafe_code,
    reason = "netdevice ioctls have no safe wrapper in std or rustix; the ifreq is zeroed and owned"
)]
pub fn bring_up_loopback() -> io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: plain system call; the result is checked before use.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a new descriptor owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: `ifreq` is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the name and writes `ifru_flags` of `req`,
    // which lives for the call.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled `ifru_flags`, the union member read here.
    unsafe {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: as above; SIOCSIFFLAGS only reads `req`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCSIFFLAGS as _, &req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The environment variables that point a sandboxed command's HTTP clients
/// at the forwarder: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their
/// lower-case forms set to `http://127.0.0.1:<port>`, and `NO_PROXY` /
/// `no_proxy` set empty (so no host bypasses the proxy; nothing outside it
/// is reachable anyway). curl, git, cargo, npm, pip and Go's and Python's
/// standard clients read these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `http://127.0.0.1:<port>`.
    pub proxy_url: String,
}

impl ProxyEnv {
    /// The variables for a forwarder on `port`.
    pub fn for_port(port: u16) -> Self {
        Self {
            proxy_url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// `(name, value)` pairs to set in the command's environment (eight of
    /// them: the names above).
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let url = &self.proxy_url;
        let mut vars: Vec<(&'static str, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .into_iter()
        .map(|name| (name, url.clone()))
        .collect();
        vars.push(("NO_PROXY", String::new()));
        vars.push(("no_proxy", String::new()));
        vars
    }
}

/// Listeners on the namespace's loopback that relay each connection to the
/// host proxy's Unix socket, byte for byte (the proxy does all checking).
#[derive(Debug)]
pub struct Forwarder {
    v4: TcpListener,
    v6: Option<TcpListener>,
    port: u16,
    proxy_socket: PathBuf,
}

impl Forwarder {
    /// Binds `127.0.0.1:<port>` and, when IPv6 is up, `[::1]:<port>` (port 0
    /// picks a free one, see [`Forwarder::port`]). Call after
    /// [`bring_up_loopback`], before the command starts (so its proxy is
    /// ready) and before Landlock's TCP rules or seccomp apply. The listeners
    /// are close-on-exec: the command does not inherit them.
    ///
    /// # Errors
    /// Binding `127.0.0.1` (loopback down: `EADDRNOTAVAIL`; port taken).
    pub fn bind(port: u16, proxy_socket: &Path) -> io::Result<Self> {
        let v4 = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        let port = v4.local_addr()?.port();
        // IPv6 may be disabled in the namespace (sysctl, boot option): then
        // the IPv4 listener alone serves.
        let v6 = TcpListener::bind((Ipv6Addr::LOCALHOST, port)).ok();
        Ok(Self {
            v4,
            v6,
            port,
            proxy_socket: proxy_socket.to_owned(),
        })
    }

    /// The listeners' descriptors (IPv4, then IPv6 when served), for the
    /// sandbox's forked forwarder process to keep while it closes the rest.
    pub(crate) fn raw_fds(&self) -> (std::os::fd::RawFd, Option<std::os::fd::RawFd>) {
        use std::os::fd::AsRawFd;
        (
            self.v4.as_raw_fd(),
            self.v6.as_ref().map(AsRawFd::as_raw_fd),
        )
    }

    /// The port both listeners use.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether `[::1]` is served too.
    pub fn serves_ipv6(&self) -> bool {
        self.v6.is_some()
    }

    /// The environment for the command.
    pub fn env(&self) -> ProxyEnv {
        ProxyEnv::for_port(self.port)
    }

    /// Relays connections until the process ends (the sandbox's PID
    /// namespace ending kills it). One thread per listener and two per
    /// connection, at most [`MAX_FORWARDED_CONNECTIONS`] connections.
    ///
    /// # Errors
    /// Only when accepting fails for good (the listener broke); the error is
    /// returned, since the command can no longer reach the network.
    pub fn serve(self) -> io::Error {
        let active = Arc::new(AtomicUsize::new(0));
        let socket: Arc<Path> = Arc::from(self.proxy_socket.as_path());
        if let Some(v6) = self.v6 {
            let (active, socket) = (Arc::clone(&active), Arc::clone(&socket));
            let spawned = std::thread::Builder::new()
                .name("forwarder-v6".into())
                .spawn(move || accept_loop(&v6, &socket, &active));
            if let Err(e) = spawned {
                return e;
            }
        }
        accept_loop(&self.v4, &socket, &active)
    }
}

fn accept_loop(listener: &TcpListener, socket: &Arc<Path>, active: &Arc<AtomicUsize>) -> io::Error {
    let mut failures = 0u32;
    loop {
        let tcp = match listener.accept() {
            Ok((tcp, _)) => {
                failures = 0;
                tcp
            }
            Err(e) => {
                failures += 1;
                if failures > 100 {
                    return e;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            }
        };
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_FORWARDED_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            continue; // dropping `tcp` closes it
        }
        let (socket, active2) = (Arc::clone(socket), Arc::clone(active));
        let spawned = std::thread::Builder::new()
            .name("forwarder-conn".into())
            .spawn(move || {
                relay(&tcp, &socket);
                active2.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Copies one connection both ways. The client's end of input is passed on
/// as a half-close (an HTTP client may still await the answer); the proxy's
/// end closes everything.
fn relay(tcp: &TcpStream, socket: &Path) {
    let unix = match UnixStream::connect(socket) {
        Ok(u) => u,
        Err(e) => {
            let body = format!("agent-tools sandbox: the network proxy is not reachable ({e})\n");
            let mut out = tcp;
            let _ = write!(
                out,
                "HTTP/1.1 502 Bad Gateway\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            return;
        }
    };
    let (Ok(mut tcp_in), Ok(mut unix_out)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let upward = std::thread::Builder::new()
        .name("forwarder-up".into())
        .spawn(move || {
            let _ = io::copy(&mut tcp_in, &mut unix_out);
            let _ = unix_out.shutdown(Shutdown::Write);
        });
    let (mut unix_in, mut tcp_out) = (&unix, tcp);
    let _ = io::copy(&mut unix_in, &mut tcp_out);
    let _ = tcp.shutdown(Shutdown::Both);
    let _ = unix.shutdown(Shutdown::Both);
    if let Ok(handle) = upward {
        let _ = handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_points_every_client_at_the_forwarder() {
        let vars = ProxyEnv::for_port(3128).vars();
        assert_eq!(vars.len(), 8);
        for name in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
        ] {
            assert!(
                vars.contains(&(name, "http://127.0.0.1:3128".to_owned())),
                "{name}"
            );
        }
        assert!(vars.contains(&("NO_PROXY", String::new())));
        assert!(vars.contains(&("no_proxy", String::new())));
    }
}
