//! The wire protocol between a host process and a sandbox's init over a Unix stream socket.
//!
//! Each message is a 4-byte little-endian length followed by a JSON body; a `Run` request
//! carries three file descriptors (stdout, stderr and status pipe write ends) as
//! `SCM_RIGHTS` ancillary data attached to its length prefix.

use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Largest message accepted, to bound memory if a peer misbehaves.
const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// What the host asks of the init.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Request {
    /// Start a command; the three pipe write ends travel as ancillary data.
    Run(RunRequest),
    /// Kill a running command and everything it started.
    Kill { id: u64 },
    /// Kill every running command and everything they started (the disk quota ran out).
    KillAll,
    /// The host has written the id maps of the init's user namespace.
    IdsMapped,
}

/// One command to start inside the sandbox.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct RunRequest {
    pub id: u64,
    pub command: String,
    pub env: Vec<(String, String)>,
    pub workdir: PathBuf,
    pub file_size_limit: Option<u64>,
    /// Set only when no cgroup enforces the process count (`RLIMIT_NPROC`).
    pub max_processes: Option<u64>,
    /// Set only when no cgroup enforces memory (`RLIMIT_AS`, per process).
    pub address_space_limit: Option<u64>,
}

/// What the init answers.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// The init has created its user namespace and waits for the host to map its ids.
    AwaitingIdMap,
    /// The sandbox is set up and serving.
    Ready,
    /// Setting up the sandbox failed; the init exits after sending this.
    SetupFailed { message: String },
    /// The command was started.
    Started { id: u64 },
    /// The request could not be carried out.
    Error { message: String },
}

/// Sends one message, with optional file descriptors attached.
pub(crate) fn send<T: Serialize>(
    socket: &UnixStream,
    message: &T,
    fds: &[RawFd],
) -> std::io::Result<()> {
    let body = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    let header = (body.len() as u32).to_le_bytes();
    let iov = [IoSlice::new(&header)];
    let cmsgs;
    let control: &[ControlMessage] = if fds.is_empty() {
        &[]
    } else {
        cmsgs = [ControlMessage::ScmRights(fds)];
        &cmsgs
    };
    let sent = sendmsg::<()>(
        socket.as_raw_fd(),
        &iov,
        control,
        MsgFlags::MSG_NOSIGNAL,
        None,
    )
    .map_err(std::io::Error::from)?;
    if sent != header.len() {
        (&*socket).write_all(&header[sent..])?;
    }
    (&*socket).write_all(&body)
}

/// Receives one message and the file descriptors attached to it. `Ok(None)` on a clean EOF.
pub(crate) fn receive<T: DeserializeOwned>(
    socket: &UnixStream,
) -> std::io::Result<Option<(T, Vec<OwnedFd>)>> {
    let mut header = [0u8; 4];
    let mut fds = Vec::new();
    let received = {
        let mut iov = [IoSliceMut::new(&mut header)];
        let mut space = nix::cmsg_space!([RawFd; 4]);
        let msg = loop {
            match recvmsg::<()>(
                socket.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Err(nix::errno::Errno::EINTR) => continue,
                other => break other.map_err(std::io::Error::from)?,
            }
        };
        for cmsg in msg.cmsgs().map_err(std::io::Error::from)? {
            if let ControlMessageOwned::ScmRights(raw) = cmsg {
                // SAFETY: the kernel just installed these descriptors in this process for us.
                fds.extend(
                    raw.into_iter()
                        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                );
            }
        }
        msg.bytes
    };
    if received == 0 {
        return Ok(None);
    }
    (&*socket).read_exact(&mut header[received..])?;
    let length = u32::from_le_bytes(header) as usize;
    if length > MAX_MESSAGE_BYTES {
        return Err(std::io::Error::other(format!(
            "sandbox message of {length} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit"
        )));
    }
    let mut body = vec![0u8; length];
    (&*socket).read_exact(&mut body)?;
    let message = serde_json::from_slice(&body).map_err(std::io::Error::other)?;
    Ok(Some((message, fds)))
}

/// Borrows raw descriptors for sending.
pub(crate) fn raw_fds(fds: &[BorrowedFd<'_>]) -> Vec<RawFd> {
    fds.iter().map(|fd| fd.as_raw_fd()).collect()
}
