//! [`Service`]: the network fixtures a recipe can ask for (`services = [...]`), served by
//! [`crate::fixtures`] in the evaluation sandbox.

use serde::{Deserialize, Serialize};

/// A fixture a recipe can ask for by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    /// A local httpbin serving `http://httpbin.org/`.
    Httpbin,
    /// Packets to addresses outside the sandbox are dropped, so connecting times out.
    Tarpit,
}

impl Service {
    /// Every service, in the order messages list them.
    pub const ALL: [Service; 2] = [Service::Httpbin, Service::Tarpit];

    /// The name recipes use.
    pub fn name(self) -> &'static str {
        match self {
            Service::Httpbin => "httpbin",
            Service::Tarpit => "tarpit",
        }
    }

    /// The service named `name` (exactly as [`Service::name`] spells it).
    pub fn from_name(name: &str) -> Option<Service> {
        Service::ALL
            .into_iter()
            .find(|service| service.name() == name)
    }

    /// The names of every service, for messages: `httpbin, tarpit`.
    pub fn names() -> String {
        Service::ALL.map(Service::name).join(", ")
    }
}

impl std::fmt::Display for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_round_trip() {
        for service in Service::ALL {
            assert_eq!(Service::from_name(service.name()), Some(service));
            let json = serde_json::to_string(&service).unwrap();
            assert_eq!(json, format!("\"{}\"", service.name()));
            assert_eq!(serde_json::from_str::<Service>(&json).unwrap(), service);
        }
        assert_eq!(Service::names(), "httpbin, tarpit");
    }

    proptest! {
        /// A name is a service exactly when it is spelled as one: other spellings and
        /// other words are not.
        #[test]
        fn only_exact_names_are_services(name in "[a-zA-Z_ -]{0,12}") {
            let found = Service::from_name(&name);
            prop_assert_eq!(found.is_some(), name == "httpbin" || name == "tarpit");
            if let Some(service) = found {
                prop_assert_eq!(service.name(), name.as_str());
            }
        }
    }
}
