//! Stdout protection for the stdio transport: protocol bytes go to the
//! original stdout, everything else written to fd 1 lands on stderr.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::{Error, ErrorKind};

/// Takes this process's stdout for the protocol: duplicates fd 1 to a new
/// close-on-exec descriptor (returned), then points fd 1 at stderr.
///
/// From then on `println!`, a C library writing to stdout, or a child process
/// that inherits fd 1 all write to stderr, and only the holder of the
/// returned descriptor writes to the real stdout. This is done at the
/// file-descriptor level because anything less (swapping Rust's `Stdout`)
/// misses native code and child processes. Call it once, before any tool runs.
///
/// # Errors
/// [`ErrorKind::Io`] when a descriptor cannot be duplicated.
pub fn protect_stdout() -> Result<OwnedFd, Error> {
    let io_err =
        |what: &str, e: rustix::io::Errno| Error::new(ErrorKind::Io, format!("cannot {what}: {e}"));
    let stdout = std::io::stdout();
    let stdout_fd = stdout.as_fd();
    let saved =
        rustix::io::fcntl_dupfd_cloexec(stdout_fd, 3).map_err(|e| io_err("duplicate stdout", e))?;
    let stderr = std::io::stderr();
    rustix::stdio::dup2_stdout(stderr.as_fd())
        .map_err(|e| io_err("redirect stdout to stderr", e))?;
    Ok(saved)
}

/// Reader of stdin and writer of the protected stdout, as async streams.
pub(crate) fn protected_stdio() -> Result<(StdinReader, ProtocolWriter), Error> {
    let saved = protect_stdout()?;
    Ok((StdinReader::open(), ProtocolWriter::open(saved)))
}

/// Stdin: a non-blocking pipe reader when stdin is a FIFO (how most MCP
/// clients start servers), reopened through `/proc/self/fd` so the flag
/// stays on our own open file description; a non-blocking socket when stdin
/// is a socket (Node.js clients: libuv gives a child socketpairs); tokio's
/// blocking stdin otherwise (a terminal, a file).
///
/// The non-blocking kinds matter when the server stops: a blocking read
/// holds a thread of the runtime's blocking pool until input arrives, and
/// the runtime's shutdown would wait for it.
pub(crate) enum StdinReader {
    Pipe(tokio::net::unix::pipe::Receiver),
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdin),
}

impl StdinReader {
    fn open() -> Self {
        let stdin = std::io::stdin();
        let fd = stdin.as_fd();
        if is_fifo(&fd)
            && let Ok(rx) =
                tokio::net::unix::pipe::OpenOptions::new().open_receiver("/proc/self/fd/0")
        {
            return Self::Pipe(rx);
        }
        if is_socket(&fd)
            && let Ok(socket) = socket_stdin(&fd)
        {
            return Self::Socket(socket);
        }
        Self::Blocking(tokio::io::stdin())
    }
}

/// Stdin's socket, duplicated (close-on-exec) and made non-blocking. A
/// socket cannot be reopened, so the flag lands on the open file description
/// fd 0 shares; nothing else in this process reads fd 0, and the commands
/// tools start get their own stdin.
fn socket_stdin(fd: &std::os::fd::BorrowedFd<'_>) -> std::io::Result<tokio::net::UnixStream> {
    let socket = std::os::unix::net::UnixStream::from(fd.try_clone_to_owned()?);
    socket.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(socket)
}

impl AsyncRead for StdinReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(r) => Pin::new(r).poll_read(cx, buf),
            Self::Socket(r) => Pin::new(r).poll_read(cx, buf),
            Self::Blocking(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

/// The saved stdout: a non-blocking pipe writer when it is a FIFO, a file
/// written on the blocking pool otherwise.
pub(crate) enum ProtocolWriter {
    Pipe(tokio::net::unix::pipe::Sender),
    File(tokio::fs::File),
}

impl ProtocolWriter {
    fn open(fd: OwnedFd) -> Self {
        if is_fifo(&fd.as_fd()) {
            let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
            if let Ok(tx) = tokio::net::unix::pipe::OpenOptions::new().open_sender(path) {
                return Self::Pipe(tx);
            }
        }
        Self::File(tokio::fs::File::from_std(File::from(fd)))
    }
}

impl AsyncWrite for ProtocolWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Pipe(w) => Pin::new(w).poll_write(cx, buf),
            Self::File(w) => Pin::new(w).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(w) => Pin::new(w).poll_flush(cx),
            Self::File(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(w) => Pin::new(w).poll_shutdown(cx),
            Self::File(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}

fn is_socket(fd: &impl AsFd) -> bool {
    rustix::fs::fstat(fd)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Socket)
        .unwrap_or(false)
}

fn is_fifo(fd: &impl AsFd) -> bool {
    rustix::fs::fstat(fd)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo)
        .unwrap_or(false)
}
