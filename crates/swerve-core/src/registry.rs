//! Closed sets of named choices (export formats, evaluators): each set lists its members
//! once, in its owning crate ([`Registry::ALL`], each with a name and a one-line
//! description), and everything else derives from that list: parsing ([`Registry::parse`]),
//! the error naming the valid choices ([`UnknownName`]), the command line's values and
//! help, and the constants Python reads.

use std::fmt;

/// A closed set of named choices, listed once.
pub trait Registry: Copy + Sized + 'static {
    /// What a member is, as an error message says it (e.g. `export format`).
    const KIND: &'static str;

    /// Every member, in the order help lists them.
    const ALL: &'static [Self];

    /// The name configuration files, the command line and Python use.
    fn name(self) -> &'static str;

    /// One line on what the member does, for help.
    fn description(self) -> &'static str;

    /// Every member's name, in [`Registry::ALL`]'s order.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|member| member.name()).collect()
    }

    /// The member called `name`, or an error listing the valid names.
    fn parse(name: &str) -> Result<Self, UnknownName> {
        Self::ALL
            .iter()
            .copied()
            .find(|member| member.name() == name)
            .ok_or_else(|| UnknownName {
                kind: Self::KIND,
                name: name.to_owned(),
                choices: Self::names(),
            })
    }
}

/// A name no member of a [`Registry`] has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// What was asked for ([`Registry::KIND`]).
    pub kind: &'static str,
    /// The name given.
    pub name: String,
    /// The valid names.
    pub choices: Vec<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {:?}: choose one of {}",
            self.kind,
            self.name,
            self.choices.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Shape {
        Round,
        Square,
    }

    impl Registry for Shape {
        const KIND: &'static str = "shape";
        const ALL: &'static [Self] = &[Shape::Round, Shape::Square];

        fn name(self) -> &'static str {
            match self {
                Shape::Round => "round",
                Shape::Square => "square",
            }
        }

        fn description(self) -> &'static str {
            "a shape"
        }
    }

    #[test]
    fn names_parse_to_their_members_and_others_list_the_choices() {
        assert_eq!(Shape::names(), ["round", "square"]);
        for &shape in Shape::ALL {
            assert_eq!(Shape::parse(shape.name()), Ok(shape));
        }
        let error = Shape::parse("oval").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown shape \"oval\": choose one of round, square"
        );
    }
}
