//! Why a command line was refused.

use crate::common::field::FieldError;
use crate::tools::blast::MacError;

/// Why a command line was refused; each names the option at fault.
#[derive(Debug, Clone, PartialEq)]
pub enum CliError {
    /// `ARG: expected an option like --name value`
    NotAnOption(String),
    /// `--NAME: missing its value`
    MissingValue(String),
    /// `WORD: unknown command (link, edge, ...)`
    UnknownCommand(String),
    /// `--NAME: unknown option of COMMAND`
    UnknownOption {
        option: String,
        command: &'static str,
    },
    /// `--NAME: missing` or `--NAME: missing (WHAT)`
    Missing {
        option: &'static str,
        what: Option<&'static str>,
    },
    /// `--NAME: "VALUE" is not EXPECTED`
    NotA {
        option: String,
        value: String,
        expected: String,
    },
    /// `--NAME: VALUE is outside RANGE`
    Outside {
        option: &'static str,
        value: String,
        range: &'static str,
    },
    /// `option FIELD: WHY`: a link setting the control socket would refuse too.
    Setting(FieldError),
    /// `--dst-mac: ...`
    Mac(MacError),
    /// `probe: expected echo or send`
    ProbeMode,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::NotAnOption(arg) => write!(f, "{arg}: expected an option like --name value"),
            CliError::MissingValue(name) => write!(f, "--{name}: missing its value"),
            CliError::UnknownCommand(word) => write!(
                f,
                "{word}: unknown command (link, edge, blast, bench-reseq, probe)"
            ),
            CliError::UnknownOption { option, command } => {
                write!(f, "--{option}: unknown option of {command}")
            }
            CliError::Missing { option, what: None } => write!(f, "--{option}: missing"),
            CliError::Missing {
                option,
                what: Some(what),
            } => write!(f, "--{option}: missing ({what})"),
            CliError::NotA {
                option,
                value,
                expected,
            } => write!(f, "--{option}: {value:?} is not {expected}"),
            CliError::Outside {
                option,
                value,
                range,
            } => write!(f, "--{option}: {value} is outside {range}"),
            CliError::Setting(error) => write!(f, "option {error}"),
            CliError::Mac(error) => write!(f, "--dst-mac: {error}"),
            CliError::ProbeMode => write!(f, "probe: expected echo or send"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Setting(error) => Some(error),
            CliError::Mac(error) => Some(error),
            _ => None,
        }
    }
}
