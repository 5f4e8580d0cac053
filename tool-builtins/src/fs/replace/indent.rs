//! Re-indentation: when a lenient strategy matched a block indented
//! differently from `old_string`, `new_string` is shifted by the same
//! difference (or the edit is refused when that cannot be done faithfully).

use std::ops::Range;

use super::spans::*;

/// The leading spaces and tabs of `line`.
pub(super) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The longest indentation every non-blank line of `text` starts with;
/// `None` when all lines are blank.
pub(super) fn common_indent(text: &str) -> Option<&str> {
    let mut common: Option<&str> = None;
    for line in text.split('\n').filter(|l| !l.trim().is_empty()) {
        let ind = indent_of(line);
        common = Some(match common {
            None => ind,
            Some(c) => {
                let n = c
                    .bytes()
                    .zip(ind.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &c[..n]
            }
        });
    }
    common
}

/// Which indentation characters `s` holds: (spaces, tabs).
pub(super) fn indent_kinds(s: &str) -> (bool, bool) {
    (s.contains(' '), s.contains('\t'))
}

/// Which indentation characters the non-blank lines of `text` use: (spaces, tabs).
pub(super) fn kinds_of(text: &str) -> (bool, bool) {
    text.split('\n')
        .filter(|l| !l.trim().is_empty())
        .map(indent_of)
        .fold((false, false), |acc, i| {
            let k = indent_kinds(i);
            (acc.0 || k.0, acc.1 || k.1)
        })
}

/// `replace` re-indented from `find`'s indentation character to the
/// block's, when one indents with tabs only and the other with spaces only
/// (`file_tabs`: the block uses tabs). The width of a tab in spaces comes
/// from pairing the block's lines with `find`'s: it must be the same
/// whole number on every indented line, and every line of `replace` must
/// convert without a remainder.
pub(super) fn convert_units(
    block: &str,
    find: &str,
    replace: &str,
    file_tabs: bool,
) -> Result<String, &'static str> {
    const MISMATCH: &str = "old_string indents with spaces where the file's lines use tabs (or the other way round), and its lines do not pair up with the file's at one tab width";
    let file_lines = find_lines(block);
    let old_lines = find_lines(find);
    if file_lines.len() != old_lines.len() {
        return Err(MISMATCH);
    }
    // Spaces per tab, from each pair of indented lines.
    let mut width: Option<usize> = None;
    for (f, o) in file_lines.iter().zip(&old_lines) {
        if f.trim().is_empty() || o.trim().is_empty() {
            continue;
        }
        let (tabs, spaces) = if file_tabs {
            (indent_of(f).len(), indent_of(o).len())
        } else {
            (indent_of(o).len(), indent_of(f).len())
        };
        if tabs == 0 && spaces == 0 {
            continue;
        }
        if tabs == 0 || spaces % tabs != 0 || width.is_some_and(|w| w != spaces / tabs) {
            return Err(MISMATCH);
        }
        width = Some(spaces / tabs);
    }
    let Some(width) = width.filter(|&w| w > 0) else {
        return Err(MISMATCH);
    };
    let (from, to) = if file_tabs { (' ', '\t') } else { ('\t', ' ') };
    let mut out = String::with_capacity(replace.len());
    for line in replace.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        let ind = indent_of(line);
        if ind.chars().any(|c| c != from) {
            return Err("a line of new_string mixes tabs and spaces in its indentation");
        }
        let depth = if file_tabs {
            if ind.len() % width != 0 {
                return Err(
                    "a line of new_string is indented by a number of spaces that is not a whole number of the file's tabs",
                );
            }
            ind.len() / width
        } else {
            ind.len() * width
        };
        out.extend(std::iter::repeat_n(to, depth));
        out.push_str(&line[ind.len()..]);
    }
    Ok(out)
}

/// For a lenient match at `span`: `None` when `replace` fits as given, else
/// the widened span (never before `floor`, the end of the previous
/// replacement) and `replace` re-indented. See [`plan`].
pub(super) fn fit_indentation(
    content: &str,
    span: &Range<usize>,
    floor: usize,
    find: &str,
    replace: &str,
) -> Result<Option<(Range<usize>, String)>, &'static str> {
    let line_start = content[..span.start].rfind('\n').map_or(0, |i| i + 1);
    if line_start < floor
        || !content[line_start..span.start]
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
    {
        return Ok(None); // mid-line: no indentation to fit
    }
    let block = &content[line_start..span.end];
    let (Some(file_ind), Some(old_ind)) = (common_indent(block), common_indent(find)) else {
        return Ok(None);
    };
    if file_ind == old_ind {
        return Ok(None);
    }
    // Indentation characters the matched lines and old_string use.
    let file_kinds = kinds_of(block);
    let old_kinds = kinds_of(find);
    if file_kinds != old_kinds && [file_kinds, old_kinds].iter().all(|k| k.0 != k.1) {
        // One side indents with tabs only, the other with spaces only.
        return convert_units(block, find, replace, file_kinds.1)
            .map(|out| Some((line_start..span.end, out)));
    }
    let mut out = String::with_capacity(replace.len() + file_ind.len() * 4);
    for line in replace.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        let ind = indent_of(line);
        let rest = &line[ind.len()..];
        let (base, extra) = if let Some(extra) = ind.strip_prefix(old_ind) {
            (file_ind, extra)
        } else if let Some(dropped) = old_ind.strip_prefix(ind) {
            // Outdented past old_string's common indentation: take as much off the file's.
            let Some(base) = file_ind.strip_suffix(dropped) else {
                return Err(
                    "a line of new_string is indented less than old_string, by more (or other) whitespace than the file's lines have",
                );
            };
            (base, "")
        } else {
            return Err(
                "a line of new_string starts with indentation that differs from old_string's",
            );
        };
        let (spaces, tabs) = indent_kinds(extra);
        let file_has_indent = file_kinds.0 || file_kinds.1;
        if file_has_indent && ((spaces && !file_kinds.0) || (tabs && !file_kinds.1)) {
            return Err(if spaces {
                "new_string indents with spaces where the file's lines use tabs"
            } else {
                "new_string indents with tabs where the file's lines use spaces"
            });
        }
        out.push_str(base);
        out.push_str(extra);
        out.push_str(rest);
    }
    Ok(Some((line_start..span.end, out)))
}
