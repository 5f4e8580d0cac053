//! `tool list --tokens`: each tool's schema tokens per provider format
//! (`tool_core::tokens`, `o200k_base`).

use std::io::{self, Write};

use serde_json::{Map, Value, json};
use tool_core::ToolRegistry;
use tool_core::tokens::{ENCODING, PROVIDER_FORMATS, schema_tokens};

use crate::failure::Failure;

/// Prints a table (name, one column per format, a `total` row) or, with
/// `json`, `{"encoding", "tools": [{"name", FORMAT: n, ...}], "total": {...}}`.
/// A tool that a format cannot render shows `-` (JSON `null`) and is left
/// out of that column's total.
pub(crate) fn list(
    registry: &ToolRegistry,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mut totals = vec![0usize; PROVIDER_FORMATS.len()];
    let mut rows = Vec::new();
    for spec in registry.specs() {
        let counts: Vec<Option<usize>> = PROVIDER_FORMATS
            .iter()
            .map(|(_, format)| schema_tokens(spec, *format).ok())
            .collect();
        for (total, n) in totals.iter_mut().zip(&counts) {
            *total += n.unwrap_or(0);
        }
        rows.push((spec.name.clone(), counts));
    }
    if json {
        let object = |counts: &mut dyn Iterator<Item = Option<usize>>| -> Map<String, Value> {
            PROVIDER_FORMATS
                .iter()
                .zip(counts)
                .map(|((label, _), n)| ((*label).to_owned(), json!(n)))
                .collect()
        };
        let tools: Vec<Value> = rows
            .iter()
            .map(|(name, counts)| {
                let mut row = Map::new();
                row.insert("name".into(), json!(name));
                row.extend(object(&mut counts.iter().copied()));
                Value::Object(row)
            })
            .collect();
        let total = object(&mut totals.iter().map(|n| Some(*n)));
        let value = json!({"encoding": ENCODING, "tools": tools, "total": total});
        serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(5);
        write!(out, "{:<width$}", "tool")?;
        for (label, _) in PROVIDER_FORMATS {
            write!(out, "  {label:>9}")?;
        }
        writeln!(out)?;
        for (name, counts) in &rows {
            write!(out, "{name:<width$}")?;
            for n in counts {
                match n {
                    Some(n) => write!(out, "  {n:>9}")?,
                    None => write!(out, "  {:>9}", "-")?,
                }
            }
            writeln!(out)?;
        }
        write!(out, "{:<width$}", "total")?;
        for n in &totals {
            write!(out, "  {n:>9}")?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "(tokens of each tool's rendering, {ENCODING}; other providers' tokenizers differ)"
        )?;
    }
    out.flush()?;
    Ok(())
}
