//! Reading a JSON Schema for arguments: which JSON types a parameter admits
//! ([`JsonTypes`]), local `$ref`s, `$defs`, `type` and `required` lists, and
//! which top-level names a macro tool's flattened parameters own ([`ArgLayout`]).
//! Shared by argument repair, the argument-error messages, the strict-mode
//! normalisation and the provider lowerings (`format/`).

use std::collections::HashMap;

use serde_json::{Map, Value};

/// JSON types a schema admits (a union over `type`, `anyOf`/`oneOf`, `enum`/`const`, `$ref`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JsonTypes {
    pub(crate) string: bool,
    pub(crate) integer: bool,
    pub(crate) number: bool,
    pub(crate) boolean: bool,
    pub(crate) object: bool,
    pub(crate) array: bool,
    /// The schema constrains nothing we can read: never repair.
    pub(crate) any: bool,
}

impl JsonTypes {
    fn add_name(&mut self, name: &str) {
        match name {
            "string" => self.string = true,
            "integer" => self.integer = true,
            "number" => self.number = true,
            "boolean" => self.boolean = true,
            "object" => self.object = true,
            "array" => self.array = true,
            "null" => {}
            _ => self.any = true,
        }
    }

    fn add_value(&mut self, v: &Value) {
        match v {
            Value::String(_) => self.string = true,
            Value::Number(n) if n.is_f64() => self.number = true,
            Value::Number(_) => self.integer = true,
            Value::Bool(_) => self.boolean = true,
            Value::Object(_) => self.object = true,
            Value::Array(_) => self.array = true,
            Value::Null => {}
        }
    }

    pub(crate) fn union(&mut self, other: Self) {
        self.string |= other.string;
        self.integer |= other.integer;
        self.number |= other.number;
        self.boolean |= other.boolean;
        self.object |= other.object;
        self.array |= other.array;
        self.any |= other.any;
    }

    pub(crate) fn of(schema: &Value, root: &Value, depth: u8) -> Self {
        let mut t = Self::default();
        let Value::Object(obj) = schema else {
            t.any = true;
            return t;
        };
        if depth > 8 {
            t.any = true;
            return t;
        }
        let mut constrained = false;
        match obj.get("type") {
            Some(Value::String(name)) => {
                constrained = true;
                t.add_name(name);
            }
            Some(Value::Array(names)) => {
                constrained = true;
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .for_each(|n| t.add_name(n));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            constrained = true;
            values.iter().for_each(|v| t.add_value(v));
        }
        if let Some(v) = obj.get("const") {
            constrained = true;
            t.add_value(v);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                constrained = true;
                for b in branches {
                    t.union(Self::of(b, root, depth + 1));
                }
            }
        }
        if let Some(Value::String(reference)) = obj.get("$ref") {
            constrained = true;
            match resolve_ref(root, reference) {
                Some(target) => t.union(Self::of(target, root, depth + 1)),
                None => t.any = true,
            }
        }
        if !constrained {
            t.any = true;
        }
        t
    }
}

pub(crate) fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// The definition name of a local reference (`#/$defs/Name` or
/// `#/definitions/Name`), unescaped; `None` for any other reference.
pub(crate) fn local_def_name(reference: &str) -> Option<String> {
    let rest = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))?;
    if rest.contains('/') {
        return None;
    }
    Some(rest.replace("~1", "/").replace("~0", "~"))
}

/// The root's definitions (`$defs`, else `definitions`).
pub(crate) fn root_defs(root: &Value) -> Option<&Map<String, Value>> {
    root.get("$defs")
        .or_else(|| root.get("definitions"))
        .and_then(Value::as_object)
}

/// The JSON types a node allows by its `type` keyword, in order.
pub(crate) fn types_of(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The node's `required` names.
pub(crate) fn required_of(node: &Map<String, Value>) -> Vec<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The JSON types of each top-level parameter, computed once per tool, and
/// the parameters schema itself (for the walk of nested values).
#[derive(Debug, Default)]
pub(crate) struct ParamTypes {
    pub(crate) types: HashMap<String, JsonTypes>,
    parameters: Value,
}

impl ParamTypes {
    pub(crate) fn from_parameters(parameters: &Value) -> Self {
        let types = parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, s)| (k.clone(), JsonTypes::of(s, parameters, 0)))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            types,
            parameters: parameters.clone(),
        }
    }

    /// The whole parameters schema (the root for `$ref`s).
    pub(crate) fn parameters(&self) -> &Value {
        &self.parameters
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }

    pub(crate) fn schema_of(&self, name: &str) -> Option<&Value> {
        self.parameters.get("properties")?.get(name)
    }
}

/// The fields of each flattened parameter, by the parameter's index.
pub(crate) type ArgLayoutFields = Vec<(usize, Vec<FlatField>)>;

/// One field of a flattened struct, as the schema names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlatField {
    /// The top-level property name (after serde renames).
    pub(crate) name: String,
    /// In the struct's `required`.
    pub(crate) required: bool,
}

/// What a macro tool's call shim needs besides its definition, computed
/// once per registration: the JSON types of the parameters (for the
/// messages) and which top-level names each flattened parameter owns.
#[derive(Debug, Default)]
pub(crate) struct ArgLayout {
    /// The parameters' JSON types, from the schema.
    pub(crate) types: ParamTypes,
    /// The fields of each flattened parameter.
    pub(crate) flattened: ArgLayoutFields,
}

impl ArgLayout {
    /// The fields the flattened parameter `idx` owns (none for any other).
    pub(crate) fn fields_of(&self, idx: usize) -> &[FlatField] {
        self.flattened
            .iter()
            .find(|(i, _)| *i == idx)
            .map_or(&[], |(_, fields)| fields.as_slice())
    }
}
