//! The control socket: a Unix stream socket, one JSON request per line.

use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::thread;

use crate::control::{LineHandler, RequestError};

/// Longest request line accepted; longer ones close the connection.
const MAX_LINE: u64 = 64 * 1024;

/// Binds `path` (replacing a stale socket left by a killed run).
pub fn bind(path: &Path) -> io::Result<UnixListener> {
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_socket() {
            fs::remove_file(path)?;
        }
    }
    UnixListener::bind(path)
}

/// Serves connections forever, one thread each.
pub fn serve<H: LineHandler + Send + Sync + 'static>(listener: UnixListener, handler: Arc<H>) {
    for stream in listener.incoming().flatten() {
        let handler = Arc::clone(&handler);
        thread::spawn(move || {
            // A client that goes away mid-reply is its own business.
            let _ = serve_connection(stream, handler.as_ref());
        });
    }
}

fn serve_connection(stream: UnixStream, handler: &dyn LineHandler) -> io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = reader
            .by_ref()
            .take(MAX_LINE)
            .read_until(b'\n', &mut bytes)?;
        if read == 0 {
            return Ok(());
        }
        if bytes.last() != Some(&b'\n') && read as u64 >= MAX_LINE {
            // The error has no characters JSON would escape.
            let error = format!(
                "{{\"ok\":false,\"error\":\"{}\"}}\n",
                RequestError::TooLong(MAX_LINE)
            );
            writer.write_all(error.as_bytes())?;
            return Ok(());
        }
        let line = String::from_utf8_lossy(&bytes);
        if line.trim().is_empty() {
            continue;
        }
        let mut reply = handler.handle(line.trim());
        reply.push('\n');
        writer.write_all(reply.as_bytes())?;
    }
}
