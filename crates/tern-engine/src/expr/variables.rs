//! Variables as the engine sees them: which ones an expression reads (for
//! planning and memoizing), and the variables that stand for the blank
//! nodes of patterns, which the planner makes and nothing ever shows.

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
        E::NamedNode(_) | E::Literal(_) => {}
        E::Variable(v) | E::Bound(v) => {
            out.insert(v.clone());
        }
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
        | E::Divide(a, b) => {
            expression_variables(a, out)?;
            expression_variables(b, out)?;
        }
        E::UnaryPlus(a) | E::UnaryMinus(a) | E::Not(a) => expression_variables(a, out)?,
        E::In(a, list) => {
            expression_variables(a, out)?;
            for e in list {
                expression_variables(e, out)?;
            }
        }
        E::If(a, b, c) => {
            expression_variables(a, out)?;
            expression_variables(b, out)?;
            expression_variables(c, out)?;
        }
        E::Coalesce(list) => {
            for e in list {
                expression_variables(e, out)?;
            }
        }
        E::FunctionCall(function, args) => {
            if matches!(
                function,
                Function::Rand | Function::BNode | Function::Uuid | Function::StrUuid
            ) {
                return None;
            }
            for e in args {
                expression_variables(e, out)?;
            }
        }
        E::Exists(_) => return None,
    }
    Some(())
}
