//! Lowering steps shared by the targets. Each is one small rewrite of a
//! JSON Schema; the targets list them, in order, as their pipeline.
//!
//! One concern, hence one file of about 900 lines: the catalogue of schema
//! rewrites (each a function plus, for the ones every target uses the same
//! way, a [`Step`] constant). The rewrites share the `$ref` and `$defs`
//! helpers at the top; splitting the catalogue would scatter them.
//!
//! A step either succeeds or returns a [`Violation`] carrying the JSON path
//! of the node it cannot rewrite and the [`Rule`] that forbids leaving it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::Format;
use super::error::{Rule, Violation};
use super::walk::{
    child_path, is_object_schema, local_def_name, push_token, required_of, root_defs, types_of,
    walk, walk_mut,
};

/// What a step knows about the rendering it is part of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    /// The target.
    pub(crate) format: Format,
}

/// One named step of a pipeline.
#[derive(Clone, Copy)]
pub(crate) struct Step {
    /// Shown in errors, e.g. `inline_refs`.
    pub(crate) name: &'static str,
    /// The rewrite.
    pub(crate) run: fn(&mut Value, &Ctx) -> Result<(), Violation>,
}

/// `drop_root_meta` ([`drop_root_meta`]), first in every pipeline.
pub(crate) const DROP_ROOT_META: Step = Step {
    name: "drop_root_meta",
    run: |s, _| {
        drop_root_meta(s);
        Ok(())
    },
};

/// `fold_all_of` ([`fold_all_of`]).
pub(crate) const FOLD_ALL_OF: Step = Step {
    name: "fold_all_of",
    run: |s, _| fold_all_of(s),
};

/// `one_of_to_any_of` ([`one_of_to_any_of`]).
pub(crate) const ONE_OF_TO_ANY_OF: Step = Step {
    name: "one_of_to_any_of",
    run: |s, _| one_of_to_any_of(s),
};

/// `require_all_properties` ([`require_all_properties`]).
pub(crate) const REQUIRE_ALL_PROPERTIES: Step = Step {
    name: "require_all_properties",
    run: |s, _| require_all_properties(s),
};

/// `default_into_description` ([`default_into_description`]).
pub(crate) const DEFAULT_INTO_DESCRIPTION: Step = Step {
    name: "default_into_description",
    run: |s, _| default_into_description(s),
};

/// `isolate_refs` ([`isolate_refs`]).
pub(crate) const ISOLATE_REFS: Step = Step {
    name: "isolate_refs",
    run: |s, _| isolate_refs(s),
};

/// `nullable_keyword` ([`nullable_keyword`]).
pub(crate) const NULLABLE_KEYWORD: Step = Step {
    name: "nullable_keyword",
    run: |s, _| nullable_keyword(s),
};

/// `const_to_enum` ([`const_to_enum`]).
pub(crate) const CONST_TO_ENUM: Step = Step {
    name: "const_to_enum",
    run: |s, _| const_to_enum(s),
};

/// Runs `steps` in order on `schema`; the first failure stops the pipeline.
pub(crate) fn run(
    steps: &[Step],
    schema: &mut Value,
    ctx: &Ctx,
) -> Result<(), (&'static str, Violation)> {
    for step in steps {
        (step.run)(schema, ctx).map_err(|v| (step.name, v))?;
    }
    Ok(())
}

/// Removes the root's `$schema`, `$id` and `$comment`: providers take the
/// parameters schema as an embedded object, not a standalone document.
pub(crate) fn drop_root_meta(schema: &mut Value) {
    if let Value::Object(root) = schema {
        for key in ["$schema", "$id", "$comment"] {
            root.remove(key);
        }
    }
}

/// A copy of the root's definitions, for resolving `$ref`s while the tree is being rewritten.
fn defs_snapshot(schema: &Value) -> Map<String, Value> {
    root_defs(schema).cloned().unwrap_or_default()
}

/// `node` itself, or the definition it references when it is a bare local `$ref`.
fn resolved<'a>(node: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    node.get("$ref")
        .and_then(Value::as_str)
        .and_then(local_def_name)
        .and_then(|name| defs.get(&name))
        .unwrap_or(node)
}

/// Folds a root `anyOf`/`oneOf`/`allOf` of object schemas into the root object.
///
/// `allOf`: the union of the members' properties and required names.
/// `anyOf`/`oneOf`: the union of the branches' properties; required are the
/// names every branch requires; a property declared by several branches with
/// different string constants (a serde tag) becomes one string `enum`. A
/// sentence listing the alternative argument sets is appended to the root
/// description. Refused (`rule`) when a branch is not an object schema.
pub(crate) fn merge_root_union(schema: &mut Value, rule: &'static Rule) -> Result<(), Violation> {
    let defs = defs_snapshot(schema);
    let Value::Object(root) = schema else {
        return Ok(());
    };
    for keyword in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = root.remove(keyword) else {
            continue;
        };
        let mut props: Map<String, Value> = root
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut required: Vec<String> = required_of(root).into_iter().map(str::to_owned).collect();
        let mut common: Option<BTreeSet<String>> = None;
        let mut shapes = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let branch = resolved(branch, &defs);
            let Some(obj) = branch.as_object().filter(|o| is_object_schema(o)) else {
                return Err(Violation::new(
                    &child_path(&child_path("", keyword), &i.to_string()),
                    rule,
                    format!(
                        "the root `{keyword}` has a branch that is not an object ({branch}); the arguments must be one object with named properties, so wrap the alternatives in a named parameter"
                    ),
                ));
            };
            let names: Vec<String> = obj
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            shapes.push(names.join(", "));
            if let Some(Value::Object(bp)) = obj.get("properties") {
                for (name, sub) in bp {
                    let merged = match props.remove(name) {
                        None => sub.clone(),
                        Some(existing) => merge_property(existing, sub),
                    };
                    props.insert(name.clone(), merged);
                }
            }
            let branch_required: BTreeSet<String> =
                required_of(obj).into_iter().map(str::to_owned).collect();
            if keyword == "allOf" {
                for r in branch_required {
                    if !required.contains(&r) {
                        required.push(r);
                    }
                }
            } else {
                common = Some(match common {
                    None => branch_required,
                    Some(c) => c.intersection(&branch_required).cloned().collect(),
                });
            }
        }
        for r in common.unwrap_or_default() {
            if !required.contains(&r) {
                required.push(r);
            }
        }
        root.insert("type".to_owned(), json!("object"));
        root.insert("properties".to_owned(), Value::Object(props));
        root.insert(
            "required".to_owned(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
        if keyword != "allOf" {
            let note = format!(
                "Exactly one of these argument sets applies: {}.",
                shapes
                    .iter()
                    .map(|s| format!("({s})"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            let description = match root.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
                _ => note,
            };
            root.insert("description".to_owned(), Value::String(description));
        }
    }
    Ok(())
}

/// Two schemas for one property name: equal ones stay, string constants and
/// enums join into one enum, anything else becomes an `anyOf` of both.
fn merge_property(a: Value, b: &Value) -> Value {
    if &a == b {
        return a;
    }
    let strings = |v: &Value| -> Option<Vec<Value>> {
        if let Some(c) = v.get("const").filter(|c| c.is_string()) {
            return Some(vec![c.clone()]);
        }
        v.get("enum")
            .and_then(Value::as_array)
            .filter(|e| e.iter().all(Value::is_string))
            .cloned()
    };
    if let (Some(mut x), Some(y)) = (strings(&a), strings(b)) {
        for v in y {
            if !x.contains(&v) {
                x.push(v);
            }
        }
        let mut out = Map::new();
        out.insert("type".to_owned(), json!("string"));
        out.insert("enum".to_owned(), Value::Array(x));
        return Value::Object(out);
    }
    json!({"anyOf": [a, b]})
}

/// Folds every `allOf` whose members are all object schemas (after resolving
/// bare `$ref`s) into its node; a one-member `allOf` is merged into its node.
/// Other `allOf`s are left for the target to refuse.
pub(crate) fn fold_all_of(schema: &mut Value) -> Result<(), Violation> {
    let defs = defs_snapshot(schema);
    walk_mut(schema, &mut |node, _| {
        let Some(Value::Array(members)) = node.get("allOf") else {
            return Ok(());
        };
        let members: Vec<Value> = members.iter().map(|m| resolved(m, &defs).clone()).collect();
        let all_objects = members
            .iter()
            .all(|m| m.as_object().is_some_and(is_object_schema));
        if !all_objects && members.len() != 1 {
            return Ok(());
        }
        node.remove("allOf");
        for member in members {
            let Value::Object(member) = member else {
                continue;
            };
            for (key, value) in member {
                match key.as_str() {
                    "properties" => {
                        let target = node
                            .entry("properties")
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let (Value::Object(t), Value::Object(v)) = (target, value) {
                            for (name, sub) in v {
                                t.entry(name).or_insert(sub);
                            }
                        }
                    }
                    "required" => {
                        let target = node
                            .entry("required")
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let (Value::Array(t), Value::Array(v)) = (target, value) {
                            for name in v {
                                if !t.contains(&name) {
                                    t.push(name);
                                }
                            }
                        }
                    }
                    _ => {
                        node.entry(key).or_insert(value);
                    }
                }
            }
        }
        Ok(())
    })
}

/// Renames every `oneOf` to `anyOf`. The branches serde generates for enums
/// exclude each other already, so "at least one" accepts the same values as
/// "exactly one".
pub(crate) fn one_of_to_any_of(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        if let Some(branches) = node.remove("oneOf") {
            match node.get_mut("anyOf") {
                Some(Value::Array(existing)) => {
                    if let Value::Array(b) = branches {
                        existing.extend(b);
                    }
                }
                _ => {
                    node.insert("anyOf".to_owned(), branches);
                }
            }
        }
        Ok(())
    })
}

/// The local definitions each definition refers to (directly).
fn ref_graph(defs: &Map<String, Value>) -> BTreeMap<String, BTreeSet<String>> {
    defs.iter()
        .map(|(name, def)| (name.clone(), refs_in(def)))
        .collect()
}

/// Local definition names referenced anywhere in `schema`.
pub(crate) fn refs_in(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(schema, &mut |node, _, _| {
        if let Some(name) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(local_def_name)
        {
            out.insert(name);
        }
    });
    out
}

/// Definitions that reach themselves through `$ref`s (recursive types).
pub(crate) fn recursive_defs(defs: &Map<String, Value>) -> BTreeSet<String> {
    let graph = ref_graph(defs);
    graph
        .keys()
        .filter(|start| {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<&String> = graph.get(*start).into_iter().flatten().collect();
            while let Some(n) = todo.pop() {
                if n == *start {
                    return true;
                }
                if seen.insert(n) {
                    todo.extend(graph.get(n).into_iter().flatten());
                }
            }
            false
        })
        .cloned()
        .collect()
}

/// How [`inline_refs`] treats references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inline {
    /// Inline every reference; a recursive type is written out `unroll`
    /// levels deep, its deeper recursive fields left out; `unroll == 0` refuses recursion.
    All {
        /// Levels of self-nesting written out.
        unroll: u8,
    },
    /// Inline references to non-recursive definitions; keep `$defs` for the recursive ones.
    NonRecursive,
}

/// The rules [`inline_refs`] enforces.
pub(crate) struct InlineRules {
    /// A `$ref` must point at a definition of this schema.
    pub(crate) resolvable: &'static Rule,
    /// Recursion cannot be written out (only for [`Inline::All`] with `unroll == 0`).
    pub(crate) recursion: &'static Rule,
}

/// Replaces `$ref`s by the definitions they name (see [`Inline`]). Keywords
/// beside a `$ref` (a field's description) override the definition's.
pub(crate) fn inline_refs(
    schema: &mut Value,
    mode: Inline,
    rules: &InlineRules,
) -> Result<(), Violation> {
    let defs = defs_snapshot(schema);
    let recursive = recursive_defs(&defs);
    let mut inliner = Inliner {
        defs: &defs,
        recursive: &recursive,
        mode,
        rules,
        stack: Vec::new(),
    };
    if let Value::Object(root) = schema {
        root.remove("$defs");
        root.remove("definitions");
    }
    let mut path = String::new();
    if inliner.expand(schema, &mut path)? == Kept::Pruned {
        return Err(Violation::new(
            "",
            rules.recursion,
            "the root schema cannot be written out",
        ));
    }
    if mode == Inline::NonRecursive && !recursive.is_empty() {
        // Keep the recursive definitions that are still referenced, with
        // their own non-recursive references inlined.
        let mut kept = Map::new();
        let mut todo: Vec<String> = refs_in(schema).into_iter().collect();
        while let Some(name) = todo.pop() {
            if kept.contains_key(&name) {
                continue;
            }
            let Some(def) = defs.get(&name) else {
                continue;
            };
            let mut def = def.clone();
            let mut def_path = child_path("/$defs", &name);
            inliner.stack.push(name.clone());
            inliner.expand(&mut def, &mut def_path)?;
            inliner.stack.pop();
            todo.extend(refs_in(&def));
            kept.insert(name, def);
        }
        if let (Value::Object(root), false) = (&mut *schema, kept.is_empty()) {
            root.insert("$defs".to_owned(), Value::Object(kept));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    Yes,
    Pruned,
}

struct Inliner<'a> {
    defs: &'a Map<String, Value>,
    recursive: &'a BTreeSet<String>,
    mode: Inline,
    rules: &'a InlineRules,
    stack: Vec<String>,
}

impl Inliner<'_> {
    fn expand(&mut self, node: &mut Value, path: &mut String) -> Result<Kept, Violation> {
        let Value::Object(obj) = node else {
            return Ok(Kept::Yes);
        };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let reference = reference.to_owned();
            let Some((name, def)) =
                local_def_name(&reference).and_then(|n| self.defs.get(&n).map(|d| (n, d)))
            else {
                return Err(Violation::new(
                    path,
                    self.rules.resolvable,
                    format!(
                        "`$ref: {reference}` does not name a definition of this schema (`#/$defs/<name>`)"
                    ),
                ));
            };
            if self.mode == Inline::NonRecursive && self.recursive.contains(&name) {
                return Ok(Kept::Yes);
            }
            let depth = self.stack.iter().filter(|n| **n == name).count();
            if depth > 0 {
                let Inline::All { unroll } = self.mode else {
                    return Ok(Kept::Yes);
                };
                if unroll == 0 {
                    return Err(Violation::new(
                        path,
                        self.rules.recursion,
                        format!(
                            "`{name}` contains itself (reached again at {path}); this target has no references, so a recursive type cannot be written out. Render with a format that keeps `$defs` (JSON Schema), or opt in to unrolling a fixed number of levels"
                        ),
                    ));
                }
                if depth > usize::from(unroll) {
                    return Ok(Kept::Pruned);
                }
            }
            let mut replacement = match def {
                Value::Object(d) => d.clone(),
                // `true` accepts anything.
                _ => Map::new(),
            };
            for (k, v) in obj.iter() {
                if k != "$ref" {
                    replacement.insert(k.clone(), v.clone());
                }
            }
            *obj = replacement;
            self.stack.push(name);
            let kept = self.expand(node, path);
            self.stack.pop();
            return kept;
        }
        self.expand_children(obj, path)
    }

    fn expand_children(
        &mut self,
        obj: &mut Map<String, Value>,
        path: &mut String,
    ) -> Result<Kept, Violation> {
        let keys: Vec<String> = obj.keys().cloned().collect();
        for key in keys {
            let len = path.len();
            push_token(path, &key);
            let outcome = self.expand_keyword(obj, &key, path);
            path.truncate(len);
            if outcome? == Kept::Pruned {
                return Ok(Kept::Pruned);
            }
        }
        Ok(Kept::Yes)
    }

    /// Expands the subschemas under `key`; `Pruned` when `obj` itself must go.
    fn expand_keyword(
        &mut self,
        obj: &mut Map<String, Value>,
        key: &str,
        path: &mut String,
    ) -> Result<Kept, Violation> {
        match key {
            "properties" | "patternProperties" | "dependentSchemas" => {
                let mut dropped = Vec::new();
                if let Some(Value::Object(map)) = obj.get_mut(key) {
                    let names: Vec<String> = map.keys().cloned().collect();
                    for name in names {
                        let len = path.len();
                        push_token(path, &name);
                        let kept = match map.get_mut(&name) {
                            Some(sub) => self.expand(sub, path),
                            None => Ok(Kept::Yes),
                        };
                        path.truncate(len);
                        if kept? == Kept::Pruned {
                            map.remove(&name);
                            dropped.push(name);
                        }
                    }
                }
                if key == "properties" && !dropped.is_empty() {
                    if let Some(Value::Array(req)) = obj.get_mut("required") {
                        req.retain(|r| r.as_str().is_none_or(|r| !dropped.iter().any(|d| d == r)));
                    }
                }
                Ok(Kept::Yes)
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                let Some(Value::Array(list)) = obj.get_mut(key) else {
                    return Ok(Kept::Yes);
                };
                let mut kept_items = Vec::with_capacity(list.len());
                for (i, mut sub) in std::mem::take(list).into_iter().enumerate() {
                    let len = path.len();
                    push_token(path, &i.to_string());
                    let kept = self.expand(&mut sub, path);
                    path.truncate(len);
                    match kept? {
                        Kept::Yes => kept_items.push(sub),
                        // A pruned member of allOf/prefixItems makes the whole node unwritable.
                        Kept::Pruned if key == "allOf" || key == "prefixItems" => {
                            return Ok(Kept::Pruned);
                        }
                        Kept::Pruned => {}
                    }
                }
                if kept_items.is_empty() {
                    return Ok(Kept::Pruned);
                }
                *list = kept_items;
                Ok(Kept::Yes)
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "propertyNames"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else"
            | "additionalItems" => {
                let kept = match obj.get_mut(key) {
                    Some(sub) => self.expand(sub, path)?,
                    None => Kept::Yes,
                };
                if kept == Kept::Pruned {
                    if key == "items" || key == "contains" {
                        return Ok(Kept::Pruned);
                    }
                    obj.remove(key);
                }
                Ok(Kept::Yes)
            }
            _ => Ok(Kept::Yes),
        }
    }
}

/// Refuses a schema whose definitions reach themselves (recursive types),
/// naming the first place a recursive definition is used.
pub(crate) fn refuse_recursion(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    let defs = defs_snapshot(schema);
    let recursive = recursive_defs(&defs);
    if recursive.is_empty() {
        return Ok(());
    }
    let mut found: Option<(String, String)> = None;
    walk(schema, &mut |node, path, _| {
        if found.is_some() {
            return;
        }
        if let Some(name) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(local_def_name)
            .filter(|n| recursive.contains(n))
        {
            found = Some((path.to_owned(), name));
        }
    });
    match found {
        None => Ok(()),
        Some((path, name)) => Err(Violation::new(
            &path,
            rule,
            format!(
                "`{name}` is a recursive type (it contains itself), which this target does not accept"
            ),
        )),
    }
}

/// Makes every object schema closed (`additionalProperties: false`).
/// Objects that are maps (`additionalProperties` a schema or `true`,
/// `patternProperties`) cannot be closed and are refused with `rule`.
pub(crate) fn close_objects(schema: &mut Value, rule: &'static Rule) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, path| {
        if !is_object_schema(node) {
            return Ok(());
        }
        if node.contains_key("patternProperties") {
            return Err(Violation::new(
                path,
                rule,
                "an object with `patternProperties` (a map keyed by pattern) cannot be closed with `additionalProperties: false`",
            ));
        }
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) if node.contains_key("properties") => {}
            Some(_) => {
                return Err(Violation::new(
                    path,
                    rule,
                    "a map (e.g. `HashMap<String, _>`, whose keys the model chooses) needs `additionalProperties`, which this target forbids; take a `Vec` of key/value structs instead, or render without strict mode",
                ));
            }
        }
        node.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(())
    })
}

/// Puts every property of every object in its `required`; properties that
/// were optional become nullable (call time maps an explicit `null` for them
/// back to "absent", see [`normalize_arguments`](super::normalize_arguments)).
pub(crate) fn require_all_properties(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        if !matches!(node.get("properties"), Some(Value::Object(_))) {
            return Ok(());
        }
        // Keep the declared order first, then the newly required names.
        let mut ordered: Vec<Value> = match node.get("required") {
            Some(Value::Array(r)) => r.clone(),
            _ => Vec::new(),
        };
        if let Some(Value::Object(props)) = node.get_mut("properties") {
            for (name, sub) in props.iter_mut() {
                let name = Value::String(name.clone());
                if !ordered.contains(&name) {
                    make_nullable(sub);
                    ordered.push(name);
                }
            }
        }
        node.insert("required".to_owned(), Value::Array(ordered));
        Ok(())
    })
}

/// Appends "Default: X." (X the value as compact JSON) to the `description`
/// of every node that has a `default`, creating the description when there is
/// none; a description that already says "Default: X" is left as it is.
///
/// Why: OpenAI's and Anthropic's strict modes do not take the `default`
/// keyword (OpenAI Structured Outputs guide, "Supported schemas"), so
/// `keep_keywords` drops it; without this step the model would see a
/// nullable parameter with no word of what `null` (absent) stands for. The
/// `default` keyword itself is left for `keep_keywords` to remove.
pub(crate) fn default_into_description(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        let Some(default) = node.get("default") else {
            return Ok(());
        };
        let said = format!("Default: {default}");
        let text = match node.get("description").and_then(Value::as_str) {
            Some(d) if d.contains(&said) => return Ok(()),
            Some(d) if d.trim_end().is_empty() => format!("{said}."),
            Some(d) => {
                let d = d.trim_end();
                let stop = if d.ends_with(['.', '!', '?']) {
                    ""
                } else {
                    "."
                };
                format!("{d}{stop} {said}.")
            }
            None => format!("{said}."),
        };
        node.insert("description".to_owned(), Value::String(text));
        Ok(())
    })
}

/// Makes `schema` accept `null` as well, in the form strict validators accept:
/// a `type` list gains `"null"` (and an `enum` gains `null`); anything else
/// is wrapped as `anyOf: [schema, {"type": "null"}]`, annotations kept outside.
pub(crate) fn make_nullable(schema: &mut Value) {
    let Value::Object(node) = schema else {
        return;
    };
    if accepts_null(node) {
        return;
    }
    let [ty, reference, any_of, constant, enumeration] =
        ["type", "$ref", "anyOf", "const", "enum"].map(|k| node.contains_key(k));
    if ty && !reference && !any_of && !constant {
        match node.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                node.insert("type".to_owned(), json!([t, "null"]));
            }
            Some(Value::Array(ts)) => ts.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(values)) = node.get_mut("enum") {
            values.push(Value::Null);
        }
        return;
    }
    if any_of && !ty && !reference && !constant && !enumeration {
        if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
            branches.push(json!({"type": "null"}));
        }
        return;
    }
    let mut inner = std::mem::take(node);
    for key in ["description", "title", "default", "examples"] {
        if let Some(v) = inner.remove(key) {
            node.insert(key.to_owned(), v);
        }
    }
    node.insert(
        "anyOf".to_owned(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
}

/// `true` when the node's `type`, `enum` or `anyOf` already admits `null`.
fn accepts_null(node: &Map<String, Value>) -> bool {
    if types_of(node).contains(&"null") {
        return node
            .get("enum")
            .and_then(Value::as_array)
            .is_none_or(|e| e.contains(&Value::Null));
    }
    node.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|b| b.iter().any(|b| b.get("type") == Some(&json!("null"))))
}

/// Wraps a `$ref` that has sibling keywords as `anyOf: [{"$ref": …}]`, the
/// siblings kept on the wrapper, so the `$ref` stands alone.
pub(crate) fn isolate_refs(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        if node.len() > 1 && !node.contains_key("anyOf") {
            if let Some(reference) = node.remove("$ref") {
                node.insert("anyOf".to_owned(), json!([{"$ref": reference}]));
            }
        }
        Ok(())
    })
}

/// Removes every keyword not in `allowed` from every schema node.
pub(crate) fn keep_keywords(schema: &mut Value, allowed: &[&str]) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        node.retain(|k, _| allowed.contains(&k.as_str()));
        Ok(())
    })
}

/// Refuses the first node that uses one of `keywords`, naming it.
pub(crate) fn refuse_keywords(
    schema: &mut Value,
    keywords: &[&str],
    rule: &'static Rule,
) -> Result<(), Violation> {
    walk_mut(
        schema,
        &mut |node, path| match keywords.iter().find(|k| node.contains_key(**k)) {
            Some(k) => Err(Violation::new(
                &child_path(path, k),
                rule,
                format!(
                    "`{k}` cannot be expressed for this target and cannot be removed without accepting other values"
                ),
            )),
            None => Ok(()),
        },
    )
}

/// Removes `format` where `keep(type, format)` is false (e.g. Rust's `uint32`).
pub(crate) fn filter_formats(
    schema: &mut Value,
    keep: fn(Option<&str>, &str) -> bool,
) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        let drop = match node.get("format").and_then(Value::as_str) {
            Some(f) => {
                let ty = types_of(node).into_iter().find(|t| *t != "null");
                !keep(ty, f)
            }
            None => node.contains_key("format"),
        };
        if drop {
            node.remove("format");
        }
        Ok(())
    })
}

/// Turns JSON Schema nullability into OpenAPI's `nullable: true`: a type list
/// with `"null"`, an `anyOf` branch `{"type": "null"}` (a single remaining
/// branch is merged into the node), and `null` in an `enum`.
pub(crate) fn nullable_keyword(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        let mut nullable = false;
        if let Some(Value::Array(types)) = node.get_mut("type") {
            let before = types.len();
            types.retain(|t| t != "null");
            nullable |= types.len() != before;
            match types.len() {
                0 => {
                    node.remove("type");
                }
                1 => {
                    let t = types.remove(0);
                    node.insert("type".to_owned(), t);
                }
                _ => {
                    let branches: Vec<Value> =
                        types.iter().map(|t| json!({"type": t.clone()})).collect();
                    node.remove("type");
                    node.insert("anyOf".to_owned(), Value::Array(branches));
                }
            }
        }
        if let Some(Value::Array(values)) = node.get_mut("enum") {
            let before = values.len();
            values.retain(|v| !v.is_null());
            nullable |= values.len() != before;
        }
        if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
            let before = branches.len();
            branches.retain(|b| b != &json!({"type": "null"}));
            nullable |= branches.len() != before;
            if branches.len() == 1 {
                if let Some(Value::Object(only)) = branches.pop() {
                    node.remove("anyOf");
                    for (k, v) in only {
                        node.entry(k).or_insert(v);
                    }
                }
            }
        }
        if nullable {
            node.insert("nullable".to_owned(), Value::Bool(true));
        }
        Ok(())
    })
}

/// Rewrites `const: v` as `enum: [v]` (string constants get `type: string`).
pub(crate) fn const_to_enum(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        if let Some(value) = node.remove("const") {
            if value.is_string() && !node.contains_key("type") {
                node.insert("type".to_owned(), json!("string"));
            }
            node.insert("enum".to_owned(), json!([value]));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    static RULE: Rule = Rule {
        id: "test.rule",
        text: "test",
        source: "test",
    };

    fn rules() -> InlineRules {
        InlineRules {
            resolvable: &RULE,
            recursion: &RULE,
        }
    }

    fn tree() -> Value {
        json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree", "description": "The tree."}},
            "required": ["tree"],
            "$defs": {"Tree": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                },
                "required": ["value", "children"]
            }}
        })
    }

    #[test]
    fn inline_all_refuses_recursion_with_path() {
        let mut s = tree();
        let v = inline_refs(&mut s, Inline::All { unroll: 0 }, &rules()).unwrap_err();
        assert_eq!(v.path, "/properties/tree/properties/children/items");
        assert!(v.message.contains("`Tree` contains itself"));
    }

    #[test]
    fn inline_all_unrolls_and_prunes() {
        let mut s = tree();
        inline_refs(&mut s, Inline::All { unroll: 1 }, &rules()).unwrap();
        assert!(s.get("$defs").is_none());
        let t = &s["properties"]["tree"];
        assert_eq!(t["description"], "The tree.");
        let inner = &t["properties"]["children"]["items"];
        assert_eq!(inner["required"], json!(["value"]));
        assert!(inner["properties"].get("children").is_none());
    }

    #[test]
    fn inline_non_recursive_keeps_only_recursive_defs() {
        let mut s = tree();
        s["properties"]["p"] = json!({"$ref": "#/$defs/P"});
        s["$defs"]["P"] = json!({"type": "string"});
        inline_refs(&mut s, Inline::NonRecursive, &rules()).unwrap();
        assert_eq!(s["properties"]["p"], json!({"type": "string"}));
        assert_eq!(
            s["$defs"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["Tree"]
        );
    }

    #[test]
    fn unresolvable_ref_is_refused() {
        let mut s = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}});
        let v = inline_refs(&mut s, Inline::NonRecursive, &rules()).unwrap_err();
        assert_eq!(v.path, "/properties/a");
    }

    #[test]
    fn nullable_forms() {
        let mut s = json!({"type": ["string", "null"]});
        make_nullable(&mut s);
        assert_eq!(s, json!({"type": ["string", "null"]}));
        let mut s = json!({"type": "string", "enum": ["a"]});
        make_nullable(&mut s);
        assert_eq!(s, json!({"type": ["string", "null"], "enum": ["a", null]}));
        let mut s = json!({"$ref": "#/$defs/X", "description": "d"});
        make_nullable(&mut s);
        assert_eq!(
            s,
            json!({"description": "d", "anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]})
        );
        let mut s = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        make_nullable(&mut s);
        assert_eq!(s["anyOf"][2], json!({"type": "null"}));
    }

    #[test]
    fn nullable_keyword_collapses_single_branch() {
        let mut s = json!({"description": "d", "anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]});
        nullable_keyword(&mut s).unwrap();
        assert_eq!(
            s,
            json!({"description": "d", "type": "object", "properties": {}, "nullable": true})
        );
    }

    #[test]
    fn root_union_merges_tags_into_enum() {
        let mut s = json!({
            "type": "object",
            "oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}, "x": {"type": "integer"}}, "required": ["kind", "x"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "b"}}, "required": ["kind"]}
            ]
        });
        merge_root_union(&mut s, &RULE).unwrap();
        assert_eq!(
            s["properties"]["kind"],
            json!({"type": "string", "enum": ["a", "b"]})
        );
        assert_eq!(s["required"], json!(["kind"]));
        assert!(s.get("oneOf").is_none());
    }
}
