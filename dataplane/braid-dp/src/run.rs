//! Running a parsed command: opening what it needs, and why that failed.

use std::error::Error;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::{EdgeOptions, LinkOptions};
use crate::common::field::FieldError;
use crate::control::server as control_server;
use crate::edge::config::EdgeConfig;
use crate::edge::runtime::Edge;
use crate::link::runtime::Link;
use crate::tools::blast::{self, BlastOptions};
use crate::tools::probe::{self, ProbeOptions};

/// Why a command could not run (braid-dp then exits with status 2).
#[derive(Debug)]
pub enum RunError {
    /// `opening A and B: ... (root needed)`: the raw sockets.
    Open {
        first: String,
        second: String,
        source: io::Error,
    },
    /// `control socket PATH: ...`
    ControlSocket { path: PathBuf, source: io::Error },
    /// `--config PATH: ...`: the edge's config file could not be read.
    ConfigRead { path: PathBuf, source: io::Error },
    /// `--config PATH: not JSON (...)`
    ConfigNotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// `--config PATH: FIELD: WHY`
    ConfigInvalid { path: PathBuf, source: FieldError },
    /// `probe echo on port PORT: ...`
    Echo { port: u16, source: io::Error },
    /// `probe send to ADDRESS: ...`
    Send { to: SocketAddr, source: io::Error },
    /// `blast on IF: ...`
    Blast {
        interface: String,
        source: io::Error,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Open {
                first,
                second,
                source,
            } => write!(f, "opening {first} and {second}: {source} (root needed)"),
            RunError::ControlSocket { path, source } => {
                write!(f, "control socket {}: {source}", path.display())
            }
            RunError::ConfigRead { path, source } => {
                write!(f, "--config {}: {source}", path.display())
            }
            RunError::ConfigNotJson { path, source } => {
                write!(f, "--config {}: not JSON ({source})", path.display())
            }
            RunError::ConfigInvalid { path, source } => {
                write!(f, "--config {}: {source}", path.display())
            }
            RunError::Echo { port, source } => write!(f, "probe echo on port {port}: {source}"),
            RunError::Send { to, source } => write!(f, "probe send to {to}: {source}"),
            RunError::Blast { interface, source } => write!(f, "blast on {interface}: {source}"),
        }
    }
}

impl Error for RunError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            RunError::Open { source, .. }
            | RunError::ControlSocket { source, .. }
            | RunError::ConfigRead { source, .. }
            | RunError::Echo { source, .. }
            | RunError::Send { source, .. }
            | RunError::Blast { source, .. } => Some(source),
            RunError::ConfigNotJson { source, .. } => Some(source),
            RunError::ConfigInvalid { source, .. } => Some(source),
        }
    }
}

fn control_socket(path: &std::path::Path) -> Result<std::os::unix::net::UnixListener, RunError> {
    control_server::bind(path).map_err(|source| RunError::ControlSocket {
        path: path.to_path_buf(),
        source,
    })
}

pub fn link(options: &LinkOptions) -> Result<(), RunError> {
    let link = Link::open(
        &options.a,
        &options.b,
        &options.config,
        options.seed,
        options.vlan,
    )
    .map_err(|source| RunError::Open {
        first: options.a.clone(),
        second: options.b.clone(),
        source,
    })?;
    let listener = control_socket(&options.control)?;
    link.start(options.realtime);
    // The caller waits for this line before it connects.
    println!(
        "braid-dp: forwarding {} <-> {}, control {}",
        options.a,
        options.b,
        options.control.display()
    );
    control_server::serve(listener, Arc::new(link));
    Ok(())
}

/// The edge's config file (none: no reservations, default knobs).
fn edge_config(path: Option<&PathBuf>) -> Result<EdgeConfig, RunError> {
    let path = match path {
        None => return Ok(EdgeConfig::default()),
        Some(path) => path.clone(),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(source) => return Err(RunError::ConfigRead { path, source }),
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(source) => return Err(RunError::ConfigNotJson { path, source }),
    };
    EdgeConfig::from_json(&value).map_err(|source| RunError::ConfigInvalid { path, source })
}

pub fn edge(options: &EdgeOptions) -> Result<(), RunError> {
    let config = edge_config(options.config.as_ref())?;
    let edge =
        Edge::open(&options.host, &options.net, config).map_err(|source| RunError::Open {
            first: options.host.clone(),
            second: options.net.clone(),
            source,
        })?;
    let edge = Arc::new(edge);
    let listener = control_socket(&options.control)?;
    Edge::start(&edge);
    println!(
        "braid-dp: edge host {} <-> net {}, control {}",
        options.host,
        options.net,
        options.control.display()
    );
    control_server::serve(listener, edge);
    Ok(())
}

pub fn probe(options: &ProbeOptions) -> Result<(), RunError> {
    match options {
        ProbeOptions::Echo { port, seconds } => {
            probe::echo(*port, *seconds).map_err(|source| RunError::Echo {
                port: *port,
                source,
            })
        }
        ProbeOptions::Send {
            to,
            count,
            interval,
        } => {
            let rtts = probe::send(*to, *count, *interval)
                .map_err(|source| RunError::Send { to: *to, source })?;
            println!("{}", serde_json::json!(rtts));
            Ok(())
        }
    }
}

pub fn blast(options: &BlastOptions) -> Result<(), RunError> {
    let report = blast::blast(options).map_err(|source| RunError::Blast {
        interface: options.interface.clone(),
        source,
    })?;
    let summary = serde_json::json!({
        "sent": report.sent,
        "failed": report.failed,
        "seconds": report.seconds,
        "pps": report.sent as f64 / report.seconds,
    });
    println!("{summary}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_config_file_names_the_file_and_the_field() {
        let dir = std::env::temp_dir().join(format!("braid-dp-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("edge.json");
        std::fs::write(&path, r#"{"reservations": [{"id": "a"}]}"#).unwrap();
        let error = edge_config(Some(&path)).unwrap_err();
        assert!(matches!(&error, RunError::ConfigInvalid { source, .. }
            if source.field == "reservations[0].paths"));
        assert_eq!(
            error.to_string(),
            format!(
                "--config {}: reservations[0].paths: missing",
                path.display()
            )
        );
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(
            edge_config(Some(&path)),
            Err(RunError::ConfigNotJson { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(
            edge_config(Some(&path)),
            Err(RunError::ConfigRead { .. })
        ));
        assert_eq!(edge_config(None).unwrap(), EdgeConfig::default());
    }
}
