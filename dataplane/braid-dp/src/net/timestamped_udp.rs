//! UDP datagrams with the kernel's receive timestamp (`SO_TIMESTAMPNS`):
//! the probe's socket boundary, and its only `unsafe` code.

use std::io;
use std::mem;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::unix::io::AsRawFd;
use std::time::{Duration, Instant};

/// Asks the kernel to stamp every datagram `socket` receives.
pub fn enable_timestamps(socket: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a live c_int of the length given; the kernel only reads it.
    let result = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &on as *const libc::c_int as *const libc::c_void,
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// CLOCK_REALTIME in nanoseconds: the clock `SO_TIMESTAMPNS` stamps with.
pub fn realtime_ns() -> u64 {
    // SAFETY: timespec is plain old data; all-zero is a valid value.
    let mut now: libc::timespec = unsafe { mem::zeroed() };
    // SAFETY: `now` is a live, writable timespec; CLOCK_REALTIME always exists.
    unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut now);
    }
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Sleeps until `deadline`, the last 50 µs in a spin (a sleep may end late by its slack).
pub fn sleep_until(deadline: Instant) {
    let spin = Duration::from_micros(50);
    let now = Instant::now();
    if deadline > now + spin {
        std::thread::sleep(deadline - now - spin);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

fn socket_address(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in, which it is large enough for.
            let a: libc::sockaddr_in =
                unsafe { *(storage as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6, which it is large enough for.
            let a: libc::sockaddr_in6 =
                unsafe { *(storage as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
            let port = u16::from_be(a.sin6_port);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                port,
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// One datagram into `buffer`: its length, sender and kernel arrival time (CLOCK_REALTIME ns).
pub fn recv_timestamped(
    socket: &UdpSocket,
    buffer: &mut [u8],
) -> io::Result<(usize, SocketAddr, u64)> {
    // SAFETY: sockaddr_storage and msghdr are plain old data; all-zero is valid.
    let mut peer: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let mut control = [0u64; 16];
    let mut iovec = libc::iovec {
        iov_base: buffer.as_mut_ptr() as *mut libc::c_void,
        iov_len: buffer.len(),
    };
    // SAFETY: as above.
    let mut header: libc::msghdr = unsafe { mem::zeroed() };
    header.msg_name = &mut peer as *mut libc::sockaddr_storage as *mut libc::c_void;
    header.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    header.msg_iov = &mut iovec;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    header.msg_controllen = mem::size_of_val(&control) as _;
    // SAFETY: header points at a live buffer, address and control buffer of the
    // lengths given, all outliving the call and not aliased elsewhere.
    let len = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut header, 0) };
    if len < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the kernel filled the control buffer and set msg_controllen; the
    // CMSG_* helpers stay within it and the timespec is read unaligned.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let time: libc::timespec =
                    std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const libc::timespec);
                stamp = Some(time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(&header, cmsg);
        }
    }
    let peer = socket_address(&peer)
        .ok_or_else(|| io::Error::new(io::ErrorKind::Other, "unknown address family"))?;
    // Without a kernel stamp (never on Linux with the option on), the time now.
    Ok((len as usize, peer, stamp.unwrap_or_else(realtime_ns)))
}
