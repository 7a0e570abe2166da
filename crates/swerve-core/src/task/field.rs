//! [`Field`]: the task fields swerve types, by their JSON names. Its own file so that
//! reading a record and deriving the fields an image row leaves out share it without
//! importing each other.

/// The fields [`Task`](super::Task) types, by their JSON names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Repo,
    InstanceId,
    BaseCommit,
    Patch,
    TestPatch,
    ProblemStatement,
    HintsText,
    CreatedAt,
    Version,
    FailToPass,
    PassToPass,
    EnvironmentSetupCommit,
}

impl Field {
    /// Every typed field, in the order SWE-bench's Hugging Face datasets use.
    pub(super) const ALL: [Field; 12] = [
        Field::Repo,
        Field::InstanceId,
        Field::BaseCommit,
        Field::Patch,
        Field::TestPatch,
        Field::ProblemStatement,
        Field::HintsText,
        Field::CreatedAt,
        Field::Version,
        Field::FailToPass,
        Field::PassToPass,
        Field::EnvironmentSetupCommit,
    ];

    /// The JSON key.
    pub(super) fn name(self) -> &'static str {
        match self {
            Field::Repo => "repo",
            Field::InstanceId => "instance_id",
            Field::BaseCommit => "base_commit",
            Field::Patch => "patch",
            Field::TestPatch => "test_patch",
            Field::ProblemStatement => "problem_statement",
            Field::HintsText => "hints_text",
            Field::CreatedAt => "created_at",
            Field::Version => "version",
            Field::FailToPass => "FAIL_TO_PASS",
            Field::PassToPass => "PASS_TO_PASS",
            Field::EnvironmentSetupCommit => "environment_setup_commit",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|field| field.name() == name)
    }
}
