//! Which tasks of a source to run, as mini-swe-agent's `--filter`, `--shuffle` and
//! `--slice` pick them: shuffle, then keep the ids the filter matches, then slice.

use regex::Regex;
use swerve_core::Task;
use swerve_core::seeded;

use crate::DatasetError;

/// A selection of tasks; the empty selection keeps every task in order.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    filter: Option<Regex>,
    shuffle: Option<u64>,
    slice: Option<Slice>,
}

impl Selection {
    /// A selection from the options' text: `filter` is a regular expression matched at the
    /// start of each `instance_id` (Python's `re.match`), `shuffle` a seed, `slice` a
    /// Python slice (`START:STOP[:STEP]`, or `STOP`).
    pub fn new(
        filter: Option<&str>,
        shuffle: Option<u64>,
        slice: Option<&str>,
    ) -> Result<Self, DatasetError> {
        let filter = filter
            .map(|given| {
                Regex::new(&format!("^(?:{given})")).map_err(|error| DatasetError::BadFilter {
                    given: given.to_owned(),
                    message: error.to_string(),
                })
            })
            .transpose()?;
        Ok(Self {
            filter,
            shuffle,
            slice: slice.map(Slice::parse).transpose()?,
        })
    }

    /// Whether this selection keeps every task in its order.
    pub fn is_empty(&self) -> bool {
        self.filter.is_none() && self.shuffle.is_none() && self.slice.is_none()
    }

    /// The selected tasks. The shuffle orders tasks by a draw that depends only on the seed
    /// and each `instance_id` (`swerve_core::seeded`), so a seed picks the same order on
    /// every machine whatever order the source lists them in; it is not Python's
    /// `random.shuffle`, so the order differs from mini-swe-agent's for the same seed.
    pub fn apply(&self, mut tasks: Vec<Task>) -> Vec<Task> {
        if let Some(seed) = self.shuffle {
            tasks.sort_by_cached_key(|task| {
                let draw = seeded::draw(seed, &task.instance_id, 0, u32::MAX);
                (draw, task.instance_id.clone())
            });
        }
        if let Some(filter) = &self.filter {
            tasks.retain(|task| filter.is_match(&task.instance_id));
        }
        match &self.slice {
            Some(slice) => slice
                .indices(tasks.len())
                .map(|at| tasks[at].clone())
                .collect(),
            None => tasks,
        }
    }
}

/// A Python slice: `start:stop:step`, each optional, negative counting from the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// The first index (default: the first, or the last with a negative step).
    pub start: Option<i64>,
    /// The index to stop before (default: past the end, or before the first with a
    /// negative step).
    pub stop: Option<i64>,
    /// The step, never 0 (default 1).
    pub step: Option<i64>,
}

impl Slice {
    /// Parses `START:STOP[:STEP]` (any part may be empty) or a lone `STOP`, as
    /// mini-swe-agent's `--slice` does.
    pub fn parse(given: &str) -> Result<Self, DatasetError> {
        let bad = |problem: String| DatasetError::BadSlice {
            given: given.to_owned(),
            problem,
        };
        let parts: Vec<&str> = given.split(':').collect();
        if parts.len() > 3 {
            return Err(bad("more than three parts".to_owned()));
        }
        let numbers = parts
            .iter()
            .map(|part| {
                let part = part.trim();
                (!part.is_empty())
                    .then(|| {
                        part.parse::<i64>()
                            .map_err(|_| bad(format!("{part:?} is not a whole number")))
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let slice = match numbers.as_slice() {
            [stop] => Self {
                start: None,
                stop: *stop,
                step: None,
            },
            [start, stop] => Self {
                start: *start,
                stop: *stop,
                step: None,
            },
            [start, stop, step] => Self {
                start: *start,
                stop: *stop,
                step: *step,
            },
            _ => unreachable!("split yields one to three parts"),
        };
        if slice.step == Some(0) {
            return Err(bad("the step is 0".to_owned()));
        }
        Ok(slice)
    }

    /// The indices this slice takes from a sequence of `len` items, in order (CPython's
    /// `PySlice_AdjustIndices`).
    pub fn indices(&self, len: usize) -> impl Iterator<Item = usize> + use<> {
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        let step = self.step.unwrap_or(1);
        let adjust = |value: i64, low: i64, high: i64| {
            let value = if value < 0 { value + len } else { value };
            value.clamp(low, high)
        };
        let (start, stop) = if step > 0 {
            (
                self.start.map_or(0, |start| adjust(start, 0, len)),
                self.stop.map_or(len, |stop| adjust(stop, 0, len)),
            )
        } else {
            (
                self.start
                    .map_or(len - 1, |start| adjust(start, -1, len - 1)),
                self.stop.map_or(-1, |stop| adjust(stop, -1, len - 1)),
            )
        };
        let mut at = start;
        std::iter::from_fn(move || {
            let inside = if step > 0 { at < stop } else { at > stop };
            inside.then(|| {
                let index = at as usize;
                at += step;
                index
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Slice;

    /// Python's answers for `list(range(n))[slice]`, computed with CPython 3.11.
    #[test]
    fn slices_take_what_python_takes() {
        let cases: [(&str, usize, &[usize]); 10] = [
            ("0:5", 10, &[0, 1, 2, 3, 4]),
            ("5", 10, &[0, 1, 2, 3, 4]),
            (":3", 2, &[0, 1]),
            ("-3:", 10, &[7, 8, 9]),
            ("::3", 10, &[0, 3, 6, 9]),
            ("::-1", 4, &[3, 2, 1, 0]),
            ("8:2:-2", 10, &[8, 6, 4]),
            ("-100:100", 3, &[0, 1, 2]),
            ("5:1", 10, &[]),
            (":-1:-1", 5, &[]),
        ];
        for (text, len, expected) in cases {
            let taken: Vec<usize> = Slice::parse(text).unwrap().indices(len).collect();
            assert_eq!(taken, expected, "{text} of {len}");
        }
    }

    #[test]
    fn bad_slices_say_what_to_write() {
        for text in ["a:b", "1:2:0", "1:2:3:4"] {
            let message = Slice::parse(text).unwrap_err().to_string();
            assert!(message.contains("START:STOP"), "{message}");
        }
    }
}
