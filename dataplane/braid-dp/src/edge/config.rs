//! The multipath edge's configuration: reservations (which traffic, over
//! which VLAN paths, with which weights) and the resequencer's knobs, read
//! from JSON and checked whole; errors name the field.

use serde_json::{json, Map, Value};

use crate::common::field::{check_fields, FieldError, Problem};
use crate::edge::reseq::ReseqParams;
use crate::edge::wrr::{check_burst, integer_weights};
use crate::frame::Prefix;

/// One path of a reservation: the 802.1Q VLAN the switch rules carry it on.
#[derive(Debug, Clone, PartialEq)]
pub struct PathConfig {
    pub vlan: u16,
    pub weight: f64,
}

/// Packets from the host whose source is in `src` and destination in `dst`
/// (absent: any) are split over `paths`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    pub id: String,
    pub src: Option<Prefix>,
    pub dst: Option<Prefix>,
    pub paths: Vec<PathConfig>,
    /// Packets per path turn.
    pub burst: u32,
    /// Resequence TCP arriving on these paths (the plan's `resequence`).
    pub resequence: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct EdgeConfig {
    pub reservations: Vec<Reservation>,
    pub reseq: ReseqParams,
}

pub const RESEQ_FIELDS: [&str; 8] = [
    "buffer_size",
    "threshold",
    "lrf",
    "hold_ms",
    "idle_ms",
    "max_flows",
    "max_packets",
    "max_bytes",
];
const RESERVATION_FIELDS: [&str; 6] = ["id", "src", "dst", "paths", "burst", "resequence"];
const DEFAULT_BURST: u32 = 1;

fn object<'a>(value: &'a Value, at: &str) -> Result<&'a Map<String, Value>, FieldError> {
    value
        .as_object()
        .ok_or_else(|| FieldError::expected(at, "an object", value))
}

fn whole(value: &Value, at: &str, low: u64, high: u64) -> Result<u64, FieldError> {
    match value.as_u64() {
        Some(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(FieldError::new(
            at,
            Problem::WholeNumber {
                unit: None,
                low,
                high,
                got: value.clone(),
            },
        )),
    }
}

fn millis(value: &Value, at: &str, high_ms: f64) -> Result<u64, FieldError> {
    match value.as_f64() {
        Some(ms) if ms.is_finite() && ms > 0.0 && ms <= high_ms => Ok((ms * 1e6).round() as u64),
        _ => Err(FieldError::new(
            at,
            Problem::Millis {
                high: high_ms,
                got: value.clone(),
            },
        )),
    }
}

impl EdgeConfig {
    pub fn from_json(value: &Value) -> Result<EdgeConfig, FieldError> {
        let top = object(value, "config")?;
        check_fields(top, &["reservations", "reseq"], "")?;
        let mut config = EdgeConfig::default();
        if let Some(reseq) = top.get("reseq") {
            let fields = object(reseq, "reseq")?;
            check_fields(fields, &RESEQ_FIELDS, "reseq.")?;
            config.reseq = reseq_patch(fields, config.reseq, "reseq.")?;
        }
        let list = match top.get("reservations") {
            None => return Ok(config),
            Some(Value::Array(list)) => list,
            Some(other) => return Err(FieldError::expected("reservations", "a list", other)),
        };
        for (i, item) in list.iter().enumerate() {
            let reservation = parse_reservation(item, &format!("reservations[{i}]"))?;
            if config.reservations.iter().any(|r| r.id == reservation.id) {
                let twice = Problem::Twice(format!("{:?}", reservation.id));
                return Err(FieldError::new(format!("reservations[{i}].id"), twice));
            }
            for path in &reservation.paths {
                if config.vlan_owner(path.vlan).is_some() {
                    let taken = Problem::VlanTaken(path.vlan);
                    return Err(FieldError::new(format!("reservations[{i}].paths"), taken));
                }
            }
            config.reservations.push(reservation);
        }
        Ok(config)
    }

    /// The reservation a VLAN belongs to.
    pub fn vlan_owner(&self, vlan: u16) -> Option<&Reservation> {
        self.reservations
            .iter()
            .find(|r| r.paths.iter().any(|p| p.vlan == vlan))
    }

    pub fn to_json(&self) -> Value {
        let reservations: Vec<Value> = self
            .reservations
            .iter()
            .map(|r| {
                let paths: Vec<Value> = r
                    .paths
                    .iter()
                    .map(|p| json!({"vlan": p.vlan, "weight": p.weight}))
                    .collect();
                json!({
                    "id": r.id,
                    "src": r.src.map(|p| p.to_string()),
                    "dst": r.dst.map(|p| p.to_string()),
                    "paths": paths,
                    "burst": r.burst,
                    "resequence": r.resequence,
                })
            })
            .collect();
        json!({"reservations": reservations, "reseq": reseq_to_json(&self.reseq)})
    }
}

fn parse_reservation(value: &Value, at: &str) -> Result<Reservation, FieldError> {
    let fields = object(value, at)?;
    check_fields(fields, &RESERVATION_FIELDS, &format!("{at}."))?;
    let id = match fields.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        Some(other) => {
            let field = format!("{at}.id");
            return Err(FieldError::expected(field, "a non-empty string", other));
        }
        None => return Err(FieldError::missing(format!("{at}.id"))),
    };
    let prefix = |name: &str| -> Result<Option<Prefix>, FieldError> {
        match fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Prefix::parse(text)
                .map(Some)
                .map_err(|e| FieldError::new(format!("{at}.{name}"), Problem::Prefix(e))),
            Some(other) => Err(FieldError::expected(
                format!("{at}.{name}"),
                "a prefix string",
                other,
            )),
        }
    };
    let (src, dst) = (prefix("src")?, prefix("dst")?);
    let paths = parse_paths(fields.get("paths"), &format!("{at}.paths"))?;
    let burst = match fields.get("burst") {
        None => DEFAULT_BURST,
        Some(value) => {
            let burst = whole(value, &format!("{at}.burst"), 1, 1_000_000)?;
            check_burst(burst).map_err(|e| FieldError::from(e).within(&format!("{at}.")))?
        }
    };
    let resequence = match fields.get("resequence") {
        None => true,
        Some(Value::Bool(on)) => *on,
        Some(other) => {
            let field = format!("{at}.resequence");
            return Err(FieldError::expected(field, "true or false", other));
        }
    };
    Ok(Reservation {
        id,
        src,
        dst,
        paths,
        burst,
        resequence,
    })
}

fn parse_paths(value: Option<&Value>, at: &str) -> Result<Vec<PathConfig>, FieldError> {
    let list = match value {
        Some(Value::Array(list)) if !list.is_empty() => list,
        Some(other) => return Err(FieldError::expected(at, "a non-empty list", other)),
        None => return Err(FieldError::missing(at)),
    };
    let mut paths: Vec<PathConfig> = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let fields = object(item, &here)?;
        check_fields(fields, &["vlan", "weight"], &format!("{here}."))?;
        let vlan = match fields.get("vlan") {
            Some(value) => whole(value, &format!("{here}.vlan"), 1, 4094)? as u16,
            None => return Err(FieldError::missing(format!("{here}.vlan"))),
        };
        if paths.iter().any(|p| p.vlan == vlan) {
            let twice = Problem::Twice(vlan.to_string());
            return Err(FieldError::new(format!("{here}.vlan"), twice));
        }
        let weight = match fields.get("weight").map(|w| (w, w.as_f64())) {
            None => 1.0,
            Some((_, Some(w))) => w,
            Some((other, None)) => {
                return Err(FieldError::expected(
                    format!("{here}.weight"),
                    "a number",
                    other,
                ))
            }
        };
        paths.push(PathConfig { vlan, weight });
    }
    let weights: Vec<f64> = paths.iter().map(|p| p.weight).collect();
    integer_weights(&weights).map_err(|e| FieldError::from(e).within(&format!("{at}.")))?;
    Ok(paths)
}

/// `base` with the resequencer fields of `fields` changed (all checked first).
pub fn reseq_patch(
    fields: &Map<String, Value>,
    base: ReseqParams,
    at: &str,
) -> Result<ReseqParams, FieldError> {
    let mut p = base;
    let get = |name: &str| fields.get(name).map(|v| (v, format!("{at}{name}")));
    if let Some((v, name)) = get("buffer_size") {
        p.buffer_size = whole(v, &name, 1, 1_000_000)? as usize;
    }
    if let Some((v, name)) = get("threshold") {
        p.threshold = whole(v, &name, 0, 1_000_000)? as usize;
    }
    if let Some((v, name)) = get("lrf") {
        p.lrf = whole(v, &name, 1, 1000)? as u32;
    }
    if let Some((v, name)) = get("hold_ms") {
        p.hold_ns = millis(v, &name, 60_000.0)?;
    }
    if let Some((v, name)) = get("idle_ms") {
        p.idle_ns = millis(v, &name, 3_600_000.0)?;
    }
    if let Some((v, name)) = get("max_flows") {
        p.max_flows = whole(v, &name, 1, 10_000_000)? as usize;
    }
    if let Some((v, name)) = get("max_packets") {
        p.max_packets = whole(v, &name, 1, 100_000_000)? as usize;
    }
    if let Some((v, name)) = get("max_bytes") {
        p.max_bytes = whole(v, &name, 1, 1 << 40)? as usize;
    }
    if p.idle_ns < p.hold_ns {
        return Err(FieldError::new(
            format!("{at}idle_ms"),
            Problem::Below("hold_ms"),
        ));
    }
    Ok(p)
}

pub fn reseq_to_json(p: &ReseqParams) -> Value {
    json!({
        "buffer_size": p.buffer_size,
        "threshold": p.threshold,
        "lrf": p.lrf,
        "hold_ms": p.hold_ns as f64 / 1e6,
        "idle_ms": p.idle_ns as f64 / 1e6,
        "max_flows": p.max_flows,
        "max_packets": p.max_packets,
        "max_bytes": p.max_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({
            "reservations": [{
                "id": "r1", "src": "10.0.0.0/24", "dst": "10.0.1.2",
                "paths": [{"vlan": 101, "weight": 0.75}, {"vlan": 102, "weight": 0.25}],
                "burst": 4, "resequence": true
            }],
            "reseq": {"buffer_size": 64, "threshold": 32, "lrf": 20, "hold_ms": 50}
        })
    }

    #[test]
    fn reads_a_whole_config_and_writes_it_back() {
        let config = EdgeConfig::from_json(&sample()).unwrap();
        let r = &config.reservations[0];
        assert_eq!((r.id.as_str(), r.burst, r.resequence), ("r1", 4, true));
        assert_eq!(r.dst.unwrap().len, 32);
        assert_eq!(
            r.paths[1],
            PathConfig {
                vlan: 102,
                weight: 0.25
            }
        );
        assert_eq!((config.reseq.buffer_size, config.reseq.threshold), (64, 32));
        assert_eq!(config.reseq.hold_ns, 50_000_000);
        assert_eq!(config.vlan_owner(102).map(|r| r.id.as_str()), Some("r1"));
        assert!(config.vlan_owner(7).is_none());
        let again = EdgeConfig::from_json(&config.to_json()).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn errors_name_the_field() {
        let cases: Vec<(Value, &str)> = vec![
            (json!([]), "config"),
            (json!({"paths": []}), "paths"),
            (json!({"reservations": {}}), "reservations"),
            (
                json!({"reservations": [{"paths": [{"vlan": 1}]}]}),
                "reservations[0].id",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": []}]}),
                "reservations[0].paths",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 4095}]}]}),
                "reservations[0].paths[0].vlan",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 5, "weight": 0}]}]}),
                "reservations[0].paths.weights",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 5, "weight": "x"}]}]}),
                "reservations[0].paths[0].weight",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 5}, {"vlan": 5}]}]}),
                "reservations[0].paths[1].vlan",
            ),
            (
                json!({"reservations": [{"id": "a", "src": "nowhere", "paths": [{"vlan": 5}]}]}),
                "reservations[0].src",
            ),
            (
                json!({"reservations": [{"id": "a", "burst": 0, "paths": [{"vlan": 5}]}]}),
                "reservations[0].burst",
            ),
            (
                json!({"reservations": [{"id": "a", "colour": 1, "paths": [{"vlan": 5}]}]}),
                "reservations[0].colour",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 5}]}, {"id": "b", "paths": [{"vlan": 5}]}]}),
                "reservations[1].paths",
            ),
            (
                json!({"reservations": [{"id": "a", "paths": [{"vlan": 5}]}, {"id": "a", "paths": [{"vlan": 6}]}]}),
                "reservations[1].id",
            ),
            (json!({"reseq": {"hold_ms": 0}}), "reseq.hold_ms"),
            (json!({"reseq": {"lrf": -1}}), "reseq.lrf"),
            (
                json!({"reseq": {"hold_ms": 500, "idle_ms": 100}}),
                "reseq.idle_ms",
            ),
            (json!({"reseq": {"size": 5}}), "reseq.size"),
        ];
        for (value, field) in cases {
            let error = EdgeConfig::from_json(&value).unwrap_err();
            assert_eq!(error.field, field, "{value}: {error}");
        }
    }
}
