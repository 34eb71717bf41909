//! Variables as the engine sees them: which ones an expression reads (for
//! planning and memoizing), which ones it reads only for their kind, and
//! the variables that stand for the blank nodes of patterns, which the
//! planner makes and nothing ever shows.

use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, Function};

const BLANK_VARIABLE_PREFIX: &str = "__bnode_";

/// Blank nodes in patterns act as variables that are never projected.
pub fn blank_variable(label: &str) -> Variable {
    Variable::new_unchecked(format!("{BLANK_VARIABLE_PREFIX}{label}"))
}

/// Whether a variable stands for a blank node of a pattern (never shown).
pub fn is_blank_variable(variable: &Variable) -> bool {
    variable.as_str().starts_with(BLANK_VARIABLE_PREFIX)
}

/// The variables an expression reads; `None` if it contains EXISTS or a
/// function whose value differs between calls.
pub fn expression_variables(expression: &Expression, out: &mut FxHashSet<Variable>) -> Option<()> {
    use Expression as E;
    match expression {
        E::Variable(v) | E::Bound(v) => {
            out.insert(v.clone());
        }
        E::FunctionCall(
            Function::Rand | Function::BNode | Function::Uuid | Function::StrUuid,
            _,
        )
        | E::Exists(_) => return None,
        _ => {}
    }
    for sub in sub_expressions(expression) {
        expression_variables(sub, out)?;
    }
    Some(())
}

/// The expressions directly inside `expression`, operands and arguments
/// (the pattern of an EXISTS is not an expression: none for it).
pub fn sub_expressions(expression: &Expression) -> Vec<&Expression> {
    use Expression as E;
    match expression {
        E::NamedNode(_) | E::Literal(_) | E::Variable(_) | E::Bound(_) | E::Exists(_) => Vec::new(),
        E::Or(a, b)
        | E::And(a, b)
        | E::Equal(a, b)
        | E::SameTerm(a, b)
        | E::Greater(a, b)
        | E::GreaterOrEqual(a, b)
        | E::Less(a, b)
        | E::LessOrEqual(a, b)
        | E::Add(a, b)
        | E::Subtract(a, b)
        | E::Multiply(a, b)
        | E::Divide(a, b) => vec![a, b],
        E::UnaryPlus(a) | E::UnaryMinus(a) | E::Not(a) => vec![a],
        E::In(a, list) => std::iter::once(a.as_ref()).chain(list).collect(),
        E::If(a, b, c) => vec![a, b, c],
        E::Coalesce(list) | E::FunctionCall(_, list) => list.iter().collect(),
    }
}

/// The variables `expression` reads only through `LANG`, `DATATYPE`,
/// `isIRI`, `isBlank`, `isLiteral`, `isNumeric` or `BOUND`: for these the
/// kind of the term (and its language or datatype) decides the value, not
/// its text. `FILTER(langMatches(LANG(?o), "de") || DATATYPE(?o) =
/// xsd:boolean)` over every triple needs no string decoded for the objects
/// that are IRIs or simple literals. Empty when the expression has an
/// EXISTS, whose pattern may read any variable.
pub fn kind_only_variables(expression: &Expression) -> FxHashSet<Variable> {
    let (mut kind, mut whole) = (FxHashSet::default(), FxHashSet::default());
    if kind_and_whole_reads(expression, &mut kind, &mut whole).is_none() {
        return FxHashSet::default();
    }
    kind.retain(|v| !whole.contains(v));
    kind
}

/// The variables `expression` reads whole, not only for their kind (see
/// [`kind_only_variables`]): to evaluate it, their terms are decoded. Empty
/// when the expression has an EXISTS.
pub fn whole_read_variables(expression: &Expression) -> FxHashSet<Variable> {
    let (mut kind, mut whole) = (FxHashSet::default(), FxHashSet::default());
    match kind_and_whole_reads(expression, &mut kind, &mut whole) {
        Some(()) => whole,
        None => FxHashSet::default(),
    }
}

/// Splits the variables `expression` reads into those read only for their
/// kind (`kind`) and those read whole (`whole`); `None` on an EXISTS.
fn kind_and_whole_reads(
    expression: &Expression,
    kind: &mut FxHashSet<Variable>,
    whole: &mut FxHashSet<Variable>,
) -> Option<()> {
    use Expression as E;
    match expression {
        E::Bound(v) => {
            kind.insert(v.clone());
        }
        E::Variable(v) => {
            whole.insert(v.clone());
        }
        E::FunctionCall(
            Function::Lang
            | Function::Datatype
            | Function::IsIri
            | Function::IsBlank
            | Function::IsLiteral
            | Function::IsNumeric,
            args,
        ) => {
            if let [E::Variable(v)] = args.as_slice() {
                kind.insert(v.clone());
                return Some(());
            }
        }
        E::Exists(_) => return None,
        _ => {}
    }
    for sub in sub_expressions(expression) {
        kind_and_whole_reads(sub, kind, whole)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::algebra::GraphPattern;
    use spargebra::{Query, SparqlParser};

    /// The sorted names of the variables `select` picks from `filter`.
    fn picked(filter: &str, select: fn(&Expression) -> FxHashSet<Variable>) -> Vec<String> {
        let text = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({filter}) }}");
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(&text).unwrap() else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        let GraphPattern::Filter { expr, .. } = *inner else {
            unreachable!()
        };
        let mut names: Vec<String> = select(&expr)
            .into_iter()
            .map(|v| v.as_str().to_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn variables_read_only_for_their_kind() {
        let kind_only = |filter: &str| picked(filter, kind_only_variables);
        let xsd = "<http://www.w3.org/2001/XMLSchema#boolean>";
        assert_eq!(
            kind_only(&format!(
                "langMatches(LANG(?o), \"de\") || DATATYPE(?o) = {xsd}"
            )),
            ["o"]
        );
        assert_eq!(
            kind_only("isIRI(?s) && BOUND(?p) && !isNumeric(?o)"),
            ["o", "p", "s"]
        );
        // Read whole somewhere: the text is needed.
        assert!(kind_only("isLiteral(?o) && STRLEN(?o) > 3").is_empty());
        assert!(kind_only("LANG(STR(?o)) = \"\"").is_empty());
        assert_eq!(kind_only("isIRI(?s) && ?o = 3"), ["s"]);
        // EXISTS may read anything.
        assert!(kind_only("isIRI(?s) && EXISTS { ?s ?p 1 }").is_empty());
    }

    #[test]
    fn variables_read_whole() {
        let whole = |filter: &str| picked(filter, whole_read_variables);
        assert_eq!(whole("REGEX(?o, \"x\", \"i\") && isIRI(?s)"), ["o"]);
        assert_eq!(
            whole("CONTAINS(LCASE(STR(?o)), \"x\") || LANG(?p) = \"\""),
            ["o"]
        );
        assert!(whole("LANG(?o) = \"de\"").is_empty());
    }
}
