//! AF_PACKET raw sockets bound to one interface: the only `unsafe` code.
//!
//! AF_PACKET works on any Linux kernel with no extra support; AF_XDP would be
//! faster but needs XDP-capable drivers, a recent kernel and libbpf, which
//! the machines braid runs its emulations on do not all have.

use std::ffi::CString;
use std::io;
use std::mem;
use std::os::unix::io::RawFd;

use crate::frame::MAX_FRAME;

/// Socket buffers are raised to this so bursts wait in the kernel, not drop.
const SOCKET_BUFFER_BYTES: libc::c_int = 32 * 1024 * 1024;

/// One received frame's place in a [`RecvBatch`].
#[derive(Debug, Clone, Copy)]
pub struct Received {
    pub len: usize,
    pub truncated: bool,
    /// The kernel's `sll_pkttype` (e.g. `PACKET_OUTGOING` for our own sends).
    pub packet_type: u8,
    /// The 802.1Q tag (TPID, TCI) the kernel took off the frame, if any.
    pub vlan: Option<(u16, u16)>,
    /// When the kernel received the frame (CLOCK_REALTIME ns), if it said.
    pub kernel_ns: Option<u64>,
}

/// Room for the `PACKET_AUXDATA` and `SCM_TIMESTAMPNS` control messages
/// (aligned for `cmsghdr`).
type ControlBuffer = [u64; 16];

/// Buffers for one `recvmmsg` call, reused across calls.
pub struct RecvBatch {
    buffers: Vec<Vec<u8>>,
    addresses: Vec<libc::sockaddr_ll>,
    controls: Vec<ControlBuffer>,
    pub received: Vec<Received>,
}

impl RecvBatch {
    pub fn new(size: usize) -> Self {
        RecvBatch {
            buffers: (0..size).map(|_| vec![0u8; MAX_FRAME]).collect(),
            // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
            addresses: vec![unsafe { mem::zeroed() }; size],
            controls: vec![[0u64; 16]; size],
            received: Vec::with_capacity(size),
        }
    }

    pub fn frame(&self, index: usize) -> &[u8] {
        let len = self.received[index].len.min(MAX_FRAME);
        &self.buffers[index][..len]
    }

    /// The VLAN id of frame `index`, whether the kernel took its tag off or not.
    pub fn vlan_id(&self, index: usize) -> Option<u16> {
        match self.received[index].vlan {
            Some((_, tci)) => Some(tci & 0x0fff),
            None => crate::frame::vlan_id(self.frame(index)),
        }
    }

    /// A copy of frame `index` as it was on the wire: the kernel strips the
    /// 802.1Q tag of received frames into metadata, and this puts it back.
    pub fn frame_to_vec(&self, index: usize) -> Vec<u8> {
        let frame = self.frame(index);
        match self.received[index].vlan {
            Some((tpid, tci)) if frame.len() >= 12 => {
                let mut tagged = Vec::with_capacity(frame.len() + 4);
                tagged.extend_from_slice(&frame[..12]);
                tagged.extend_from_slice(&tpid.to_be_bytes());
                tagged.extend_from_slice(&tci.to_be_bytes());
                tagged.extend_from_slice(&frame[12..]);
                tagged
            }
            _ => frame.to_vec(),
        }
    }
}

/// The VLAN tag the kernel stripped (from `PACKET_AUXDATA`) and the kernel's
/// receive time (from `SCM_TIMESTAMPNS`) of one message.
fn control_of(header: &libc::msghdr) -> (Option<(u16, u16)>, Option<u64>) {
    let (mut vlan, mut kernel_ns) = (None, None);
    // SAFETY: header's control buffer was filled by the kernel and its length
    // set by it; the CMSG_* helpers stay within msg_controllen, and each
    // payload is read unaligned into a local copy.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(header);
        while !cmsg.is_null() {
            let (level, kind) = ((*cmsg).cmsg_level, (*cmsg).cmsg_type);
            if level == libc::SOL_PACKET && kind == libc::PACKET_AUXDATA {
                let data = libc::CMSG_DATA(cmsg) as *const libc::tpacket_auxdata;
                let aux = std::ptr::read_unaligned(data);
                if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                    let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                        aux.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    vlan = Some((tpid, aux.tp_vlan_tci));
                }
            } else if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS {
                let data = libc::CMSG_DATA(cmsg) as *const libc::timespec;
                let time = std::ptr::read_unaligned(data);
                kernel_ns = Some(time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(header, cmsg);
        }
    }
    (vlan, kernel_ns)
}

/// A raw socket sending and receiving whole Ethernet frames on one interface.
pub struct PacketSocket {
    fd: RawFd,
    pub interface: String,
}

fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

fn interface_index(name: &str) -> io::Result<libc::c_int> {
    let c_name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: c_name is a valid NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(c_name.as_ptr()) };
    if index == 0 {
        let error = io::Error::last_os_error();
        return Err(io::Error::new(
            error.kind(),
            format!("interface {name}: {error}"),
        ));
    }
    Ok(index as libc::c_int)
}

impl PacketSocket {
    /// Opens a socket on `interface`, promiscuous, deaf to its own sends.
    pub fn open(interface: &str) -> io::Result<PacketSocket> {
        let index = interface_index(interface)?;
        // Protocol 0 receives nothing until bind, so no frame of another
        // interface slips in between socket() and bind().
        // SAFETY: plain system call with constant arguments; the result is checked.
        let fd = check(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) })?;
        let socket = PacketSocket {
            fd,
            interface: interface.to_string(),
        };
        socket.bind(index)?;
        socket
            .set_option(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)
            .ok();
        // Tags the kernel strips on receive come back as metadata (see frame_to_vec).
        socket
            .set_option(libc::SOL_PACKET, libc::PACKET_AUXDATA, 1)
            .ok();
        // The kernel's receive time: delays count from it, not from when we woke.
        socket
            .set_option(libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
            .ok();
        socket.raise_buffers();
        socket.join_promiscuous(index)?;
        Ok(socket)
    }

    fn bind(&self, index: libc::c_int) -> io::Result<()> {
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut address: libc::sockaddr_ll = unsafe { mem::zeroed() };
        address.sll_family = libc::AF_PACKET as u16;
        address.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        address.sll_ifindex = index;
        let len = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: address is a valid sockaddr_ll of the given length, alive for the call.
        let result = unsafe {
            libc::bind(
                self.fd,
                &address as *const libc::sockaddr_ll as *const libc::sockaddr,
                len,
            )
        };
        check(result).map(|_| ())
    }

    fn set_option(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: libc::c_int,
    ) -> io::Result<()> {
        self.set_option_struct(level, name, &value)
    }

    fn set_option_struct<T>(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: &T,
    ) -> io::Result<()> {
        let len = mem::size_of::<T>() as libc::socklen_t;
        // SAFETY: value points to a live T of exactly len bytes; the kernel only reads it.
        let result = unsafe {
            libc::setsockopt(
                self.fd,
                level,
                name,
                value as *const T as *const libc::c_void,
                len,
            )
        };
        check(result).map(|_| ())
    }

    fn raise_buffers(&self) {
        // The *FORCE options pass the system limits (root); otherwise take what we get.
        let pairs = [
            (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
            (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
        ];
        for (forced, plain) in pairs {
            if self
                .set_option(libc::SOL_SOCKET, forced, SOCKET_BUFFER_BYTES)
                .is_err()
            {
                self.set_option(libc::SOL_SOCKET, plain, SOCKET_BUFFER_BYTES)
                    .ok();
            }
        }
    }

    fn join_promiscuous(&self, index: libc::c_int) -> io::Result<()> {
        // SAFETY: packet_mreq is plain old data; all-zero is a valid value.
        let mut request: libc::packet_mreq = unsafe { mem::zeroed() };
        request.mr_ifindex = index;
        request.mr_type = libc::PACKET_MR_PROMISC as u16;
        self.set_option_struct(libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &request)
    }

    /// Blocks until at least one frame arrives, then takes what is ready.
    pub fn recv_batch(&self, batch: &mut RecvBatch) -> io::Result<usize> {
        let count = batch.buffers.len();
        let mut iovecs: Vec<libc::iovec> = batch
            .buffers
            .iter_mut()
            .map(|buffer| libc::iovec {
                iov_base: buffer.as_mut_ptr() as *mut libc::c_void,
                iov_len: buffer.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is a valid value.
        let mut headers: Vec<libc::mmsghdr> = vec![unsafe { mem::zeroed() }; count];
        for (i, header) in headers.iter_mut().enumerate() {
            header.msg_hdr.msg_name =
                &mut batch.addresses[i] as *mut libc::sockaddr_ll as *mut libc::c_void;
            header.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            header.msg_hdr.msg_iov = &mut iovecs[i];
            header.msg_hdr.msg_iovlen = 1;
            header.msg_hdr.msg_control = batch.controls[i].as_mut_ptr() as *mut libc::c_void;
            header.msg_hdr.msg_controllen = mem::size_of::<ControlBuffer>() as _;
        }
        // SAFETY: every header points at a live iovec, buffer, address and
        // control buffer of the lengths given; they outlive the call and nothing else aliases them.
        let result = unsafe {
            libc::recvmmsg(
                self.fd,
                headers.as_mut_ptr(),
                count as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        let received = check(result)? as usize;
        batch.received.clear();
        for (i, header) in headers.iter().take(received).enumerate() {
            let (vlan, kernel_ns) = control_of(&header.msg_hdr);
            batch.received.push(Received {
                len: header.msg_len as usize,
                truncated: header.msg_hdr.msg_flags & libc::MSG_TRUNC != 0,
                packet_type: batch.addresses[i].sll_pkttype,
                vlan,
                kernel_ns,
            });
        }
        Ok(received)
    }

    /// Sends frames in order; returns how many went out and how many failed.
    pub fn send_batch(&self, frames: &[&[u8]]) -> (usize, usize) {
        let (mut sent, mut failed, mut start) = (0, 0, 0);
        while start < frames.len() {
            match self.send_some(&frames[start..]) {
                Ok(n) => {
                    sent += n;
                    start += n;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // The first frame of the rest failed (too big, no buffer): skip it.
                    failed += 1;
                    start += 1;
                }
            }
        }
        (sent, failed)
    }

    fn send_some(&self, frames: &[&[u8]]) -> io::Result<usize> {
        let mut iovecs: Vec<libc::iovec> = frames
            .iter()
            .map(|frame| libc::iovec {
                iov_base: frame.as_ptr() as *mut libc::c_void,
                iov_len: frame.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is a valid value.
        let mut headers: Vec<libc::mmsghdr> = vec![unsafe { mem::zeroed() }; frames.len()];
        for (header, iovec) in headers.iter_mut().zip(iovecs.iter_mut()) {
            header.msg_hdr.msg_iov = iovec;
            header.msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: each header points at one live iovec over a live frame; the
        // kernel only reads the frames (the *mut cast is what iovec requires).
        // With no address the bound interface is used.
        let result = unsafe {
            libc::sendmmsg(
                self.fd,
                headers.as_mut_ptr(),
                frames.len() as libc::c_uint,
                0,
            )
        };
        let sent = check(result)? as usize;
        if sent == 0 {
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        }
        Ok(sent)
    }

    /// Makes `recv_batch` give up with `WouldBlock` after `timeout` without frames.
    pub fn set_receive_timeout(&self, timeout: std::time::Duration) -> io::Result<()> {
        let value = libc::timeval {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        };
        self.set_option_struct(libc::SOL_SOCKET, libc::SO_RCVTIMEO, &value)
    }

    /// Frames the kernel dropped for this socket since the last call.
    pub fn take_kernel_drops(&self) -> u64 {
        // SAFETY: tpacket_stats is plain old data; all-zero is a valid value.
        let mut stats: libc::tpacket_stats = unsafe { mem::zeroed() };
        let mut len = mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: stats is a live, writable tpacket_stats and len holds its size.
        let result = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut stats as *mut libc::tpacket_stats as *mut libc::c_void,
                &mut len,
            )
        };
        if result < 0 {
            return 0;
        }
        u64::from(stats.tp_drops)
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        // SAFETY: we own fd and close it once; promiscuous membership ends with it.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// Lets the calling thread's sleeps end within a microsecond of their deadline
/// (Linux otherwise adds up to 50 µs of slack to group wake-ups).
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches only
    // the calling thread's scheduling attribute.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0);
    }
}

/// Puts the calling thread in the real-time FIFO class at a low priority, so
/// that it runs as soon as its sleep ends, ahead of ordinary processes
/// (root only; the kernel's real-time throttling still leaves 5 % to others).
pub fn realtime_priority() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: pid 0 is the calling thread; `param` is a live sched_param the kernel only reads.
    let result = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    check(result).map(|_| ())
}
