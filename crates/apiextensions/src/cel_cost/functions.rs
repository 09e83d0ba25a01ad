//! The cost of one function call in the static estimate ([`super`]): the list and set
//! extensions' estimators (cel-go `ext/lists.go`, `ext/sets.go`), then the Kubernetes
//! libraries' (apiserver `pkg/cel/library/cost.go`, `EstimateCallCost`), then cel-go's own
//! (`checker/cost.go`, `functionCost`), each keyed by function name or overload.

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::{
    Arg, Estimator, FORMAT_REGEX, FORMAT_SIZE, Kind, REGEX, Range, TRAVERSAL, UNKNOWN,
    union_entries,
};
use crate::cel_overloads::Overload;
use crate::cel_types::CelType;

impl<'a> Estimator<'_, 'a> {
    /// The overloads of a call as cel-go's checker would record them.
    pub(super) fn kinds(
        &self,
        id: u64,
        name: &str,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Vec<Kind> {
        match self.typed.overloads.get(&id) {
            Some(overloads) if !overloads.is_empty() => {
                overloads.iter().map(|o| kind_of(name, o)).collect()
            }
            _ => vec![untyped_kind(name, target, args)],
        }
    }

    /// The cost of one overload without its arguments' costs, and its result's size: the list
    /// and set extensions' estimators, then the Kubernetes libraries', then cel-go's own.
    pub(super) fn function(
        &mut self,
        e: &IdedExpr,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
        arg_costs: &[Range],
    ) -> (Range, Option<Range>) {
        let arg_sum = arg_costs.iter().fold(Range::fixed(0), |s, c| s.add(*c));
        let with_args = |(cost, size): (Range, Option<Range>)| (cost.add(arg_sum), size);
        if let Some(estimate) = self.extension(name, kind, target, args) {
            return with_args(estimate);
        }
        if let Some(estimate) = self.kubernetes(name, kind, target, args) {
            return with_args(estimate);
        }
        let size = |a: &Arg<'_, 'a>| a.size.unwrap_or(UNKNOWN);
        let one = |a: &[Arg<'_, 'a>]| a.first().map(size).unwrap_or(UNKNOWN);
        match kind {
            Kind::FormatString if target.is_some() => {
                return with_args((target.map_or(UNKNOWN, size).factor(TRAVERSAL), None));
            }
            Kind::StringToBytes if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min,
                    max: s.max.saturating_mul(4),
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::BytesToString if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min / 4,
                    max: s.max,
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::Quote if args.len() == 1 => {
                let s = one(args);
                let result = Range {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                return with_args((s.factor(TRAVERSAL), Some(result)));
            }
            Kind::StartsOrEnds if args.len() == 1 => {
                return with_args((one(args).factor(TRAVERSAL), None));
            }
            Kind::InList if args.len() == 2 => {
                return with_args((size(&args[1]).factor(1.0), None));
            }
            Kind::MatchesString if args.len() == 1 => {
                if let Some(target) = target {
                    let text = size(target).add(Range::fixed(1)).factor(TRAVERSAL);
                    let regex = one(args).factor(REGEX);
                    return with_args((text.mul(regex), None));
                }
            }
            Kind::ContainsString if args.len() == 1 => {
                if let Some(target) = target {
                    let text = size(target).factor(TRAVERSAL);
                    let sub = one(args).factor(TRAVERSAL);
                    return with_args((text.mul(sub), None));
                }
            }
            Kind::Logical if arg_costs.len() == 2 => {
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                let cost = Range {
                    min: lhs.min,
                    max: lhs.add(rhs).max,
                };
                return (cost, None);
            }
            Kind::Conditional if args.len() == 3 && arg_costs.len() == 3 => {
                let result = size(&args[1]).union(size(&args[2]));
                let entries = union_entries(
                    self.entry_sizes(args[1].expr),
                    self.entry_sizes(args[2].expr),
                );
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (cost, Some(result));
            }
            Kind::AddString | Kind::AddList if args.len() == 2 => {
                let result = size(&args[0]).add(size(&args[1]));
                let entries = union_entries(
                    self.entry_sizes(args[0].expr),
                    self.entry_sizes(args[1].expr),
                );
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = if kind == Kind::AddList {
                    Range::fixed(1)
                } else {
                    result.factor(TRAVERSAL)
                };
                return with_args((cost, Some(result)));
            }
            Kind::Compare | Kind::Equality if args.len() == 2 => {
                let smallest = size(&args[0]).max.min(size(&args[1]).max);
                let cost = Range {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                return with_args((cost.factor(TRAVERSAL), None));
            }
            _ => {}
        }
        with_args((Range::fixed(1), None))
    }

    /// cel-go `ext/lists.go` and `ext/sets.go` estimators.
    fn extension(
        &self,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Option<(Range, Option<Range>)> {
        let allocating = |factor: f64, size: Range| {
            let cost = size
                .factor(factor)
                .add(Range::fixed(1))
                .add(Range::fixed(10));
            Some((cost, Some(size)))
        };
        let int_literal = |arg: &Arg<'_, 'a>, default: u64| match &arg.expr.expr {
            Expr::Literal(LiteralValue::Int(i)) => u64::try_from(*i.inner()).unwrap_or(default),
            _ => default,
        };
        match name {
            "sets.contains" | "sets.intersects" | "sets.equivalent" if args.len() == 2 => {
                let factor = if name == "sets.equivalent" { 2.0 } else { 1.0 };
                let product = self.k8s_size(&args[0]).mul(self.k8s_size(&args[1]));
                Some((product.factor(factor).add(Range::fixed(1)), None))
            }
            "slice" if args.len() == 2 => {
                let size = self.k8s_size(target?);
                let start = int_literal(&args[0], 0);
                let end = int_literal(&args[1], size.max);
                allocating(1.0, Range::fixed(end.wrapping_sub(start)))
            }
            "lists.range" if target.is_none() && args.len() == 1 => {
                allocating(1.0, Range::fixed(int_literal(&args[0], u64::MAX)))
            }
            "flatten" if args.len() <= 1 => {
                let size = self.k8s_size(target?);
                let depth = args.first().map_or(1, |a| int_literal(a, u64::MAX));
                allocating(depth as f64, size)
            }
            "distinct" if args.is_empty() => {
                let size = self.k8s_size(target?);
                allocating(2.0, size.mul(size))
            }
            "sort" if args.is_empty() => {
                let target = target?;
                let size = self.k8s_size(target);
                let strings = matches!(
                    &target.ty,
                    CelType::List(item) if matches!(**item, CelType::String | CelType::Bytes)
                );
                allocating(if strings { 2.1 } else { 2.0 }, size.mul(size))
            }
            _ if kind == Kind::ListReverse && args.is_empty() => {
                allocating(1.0, self.k8s_size(target?))
            }
            _ => None,
        }
    }

    /// apiserver `pkg/cel/library/cost.go` (`EstimateCallCost`), by function name.
    fn kubernetes(
        &self,
        name: &str,
        kind: Kind,
        target: Option<&Arg<'_, 'a>>,
        args: &[Arg<'_, 'a>],
    ) -> Option<(Range, Option<Range>)> {
        let fixed = |n: u64| Some((Range::fixed(n), None));
        let first = || args.first().map(|a| self.k8s_size(a));
        match name {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let target = target?;
                let cost = match self.element_size(target) {
                    Some((size, element)) => {
                        let mut each = Range::fixed(1);
                        if matches!(element, CelType::String | CelType::Bytes) {
                            each = each.add(size.factor(TRAVERSAL));
                        }
                        let count = self.k8s_size(target);
                        Range {
                            min: count.min.saturating_mul(each.min),
                            max: count.max.saturating_mul(each.max),
                        }
                    }
                    None => self.k8s_size(target).factor(TRAVERSAL),
                };
                Some((cost, None))
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let size = first()?;
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let size = self.k8s_size(target?);
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "replace" if args.len() >= 2 => {
                let size = self.k8s_size(target?);
                let result = replaced_size(size, self.k8s_size(&args[0]), self.k8s_size(&args[1]));
                Some((size.factor(2.0 * TRAVERSAL), Some(result)))
            }
            "split" => {
                let size = self.k8s_size(target?);
                let max = match args.get(1).map(|a| &a.expr.expr) {
                    Some(Expr::Literal(LiteralValue::Int(i))) => *i.inner() as u64,
                    _ => size.max,
                };
                Some((size.factor(2.0 * TRAVERSAL), Some(Range { min: 0, max })))
            }
            "join" => {
                let target = target?;
                let count = self.k8s_size(target);
                let mut size = match self.element_size(target) {
                    Some((element, _)) => count.mul(element),
                    None => Range::fixed(0),
                };
                if let Some(separator) = first() {
                    let separators = Range {
                        min: count.min.saturating_sub(1),
                        max: count.max.saturating_sub(1),
                    };
                    size = size.add(separator.mul(separators));
                }
                Some((size.factor(TRAVERSAL), Some(size)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let size = self.k8s_size(target?);
                let text = size.add(Range::fixed(1)).factor(TRAVERSAL);
                let regex = first()?.factor(REGEX);
                let result = Range {
                    min: 0,
                    max: size.max,
                };
                Some((text.mul(regex), Some(result)))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
                if !args.is_empty() =>
            {
                Some((first()?.factor(TRAVERSAL), None))
            }
            "ip" if kind == Kind::CidrIp => fixed(1),
            "ip" if !args.is_empty() => Some((first()?.factor(TRAVERSAL), None)),
            "ip.isCanonical" if !args.is_empty() => Some((first()?.factor(2.0 * TRAVERSAL), None)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => fixed(1),
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                let address = Range { min: 4, max: 16 };
                let mut cost = address.add(address).factor(TRAVERSAL);
                if name == "containsCIDR" {
                    cost = cost.add(address.factor(TRAVERSAL)).add(Range::fixed(1));
                }
                if matches!(kind, Kind::ContainsIpString | Kind::ContainsCidrString) {
                    cost = cost.add(first()?.factor(TRAVERSAL));
                }
                Some((cost, None))
            }
            "validate" if !args.is_empty() => {
                let cost = first()?.factor(TRAVERSAL).factor(FORMAT_REGEX * REGEX);
                Some((cost, None))
            }
            "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
            | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
            | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
            | "getQuery" => fixed(1),
            "_==_" if args.len() == 2 && args[0].ty == args[1].ty => match &args[0].ty {
                CelType::Opaque(
                    "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver",
                ) => fixed(1),
                CelType::Opaque("kubernetes.NamedFormat") => Some((
                    Range {
                        min: 1,
                        max: FORMAT_SIZE,
                    }
                    .factor(TRAVERSAL),
                    None,
                )),
                CelType::Opaque("kubernetes.URL") => {
                    // v1.36 reads the right operand's size twice.
                    let max = args[1].size.map_or(1, |s| s.max);
                    Some((Range { min: 1, max }.factor(TRAVERSAL), None))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The size `replace` leaves (the Kubernetes strings library's estimate).
fn replaced_size(size: Range, from: Range, to: Range) -> Range {
    let (mut count, mut kept) = (Range::fixed(0), Range::fixed(0));
    if from.min == 0 {
        count.max = if size.max < u64::MAX {
            size.max + 1
        } else {
            size.max
        };
        kept.max = size.max;
    } else if to.max <= from.min {
        kept.max = size.max;
    } else {
        count.max = (size.max as f64 / from.min as f64).ceil() as u64;
    }
    if from.max == 0 {
        count.min = if size.min < u64::MAX {
            size.min + 1
        } else {
            size.min
        };
        kept.min = size.min;
    } else if from.max <= to.min {
        kept.min = size.min;
    } else {
        count.min = (size.min as f64 / from.max as f64).ceil() as u64;
    }
    count.mul(to).add(kept)
}

/// The cost class of a typed overload.
fn kind_of(name: &str, overload: &Overload) -> Kind {
    let first = overload.params.first();
    match name {
        "_+_" => match first {
            Some(CelType::String | CelType::Bytes) => Kind::AddString,
            Some(CelType::List(_)) => Kind::AddList,
            _ => Kind::Other,
        },
        "_<_" | "_<=_" | "_>_" | "_>=_" => match first {
            Some(CelType::String | CelType::Bytes) => Kind::Compare,
            _ => Kind::Other,
        },
        "_==_" | "_!=_" => Kind::Equality,
        "@in" => match overload.params.get(1) {
            Some(CelType::List(_)) => Kind::InList,
            _ => Kind::Other,
        },
        "matches" if overload.receiver.is_some() => Kind::MatchesString,
        "contains" => Kind::ContainsString,
        "startsWith" | "endsWith" => Kind::StartsOrEnds,
        "bytes" if first == Some(&CelType::String) => Kind::StringToBytes,
        "string" if first == Some(&CelType::Bytes) => Kind::BytesToString,
        "_&&_" | "_||_" => Kind::Logical,
        "_?_:_" => Kind::Conditional,
        "_[_]" => match first {
            Some(CelType::List(_)) => Kind::IndexList,
            Some(CelType::Map(..)) => Kind::IndexMap,
            _ => Kind::Other,
        },
        "ip" if overload.receiver.is_some() => Kind::CidrIp,
        "containsIP" if first == Some(&CelType::String) => Kind::ContainsIpString,
        "containsCIDR" if first == Some(&CelType::String) => Kind::ContainsCidrString,
        "reverse" if matches!(overload.receiver, Some(CelType::List(_))) => Kind::ListReverse,
        _ => Kind::Other,
    }
}

/// The cost class of a call the checker does not type, from its name and operands.
fn untyped_kind(name: &str, target: Option<&Arg<'_, '_>>, args: &[Arg<'_, '_>]) -> Kind {
    match name {
        "format" if target.is_some() => Kind::FormatString,
        "strings.quote" if args.len() == 1 => Kind::Quote,
        "reverse" if target.is_some_and(|t| matches!(t.ty, CelType::List(_))) => Kind::ListReverse,
        _ => Kind::Other,
    }
}
