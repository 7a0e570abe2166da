//! The context-size figure (the SWE-AGILE paper's "sawtooth"), as a hand-written SVG: one
//! panel per trajectory, context tokens per step (x: step from 1, y: tokens from 0), one
//! polyline per policy, a shared legend.
//!
//! Each polyline carries its values in `data-series` (the policy) and `data-tokens` (the
//! tokens per step, comma-separated), so the figure can be read back by a program.

use std::fmt::Write;

/// The lines of one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The panel's title (the trajectory).
    pub title: String,
    /// Each line's label (the policy) and its value per step.
    pub series: Vec<(String, Vec<usize>)>,
}

/// Colours of the lines, in order (Okabe–Ito, readable by colour-blind readers).
const COLOURS: [&str; 6] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];
const WIDTH: f64 = 760.0;
const PANEL_HEIGHT: f64 = 280.0;
const LEGEND_HEIGHT: f64 = 36.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;

/// Where a panel's plot area is and what it spans.
struct Frame {
    x0: f64,
    y0: f64,
    width: f64,
    height: f64,
    steps: usize,
    y_max: f64,
}

impl Frame {
    /// The point of step `index` (from 0) with `value` tokens.
    fn point(&self, index: usize, value: usize) -> (f64, f64) {
        let x = if self.steps <= 1 {
            self.x0 + self.width / 2.0
        } else {
            self.x0 + self.width * index as f64 / (self.steps - 1) as f64
        };
        let y = self.y0 + self.height - self.height * value as f64 / self.y_max;
        (x, y)
    }
}

/// The figure: a legend of the first panel's labels, then the panels stacked.
pub fn svg(panels: &[Panel]) -> String {
    let height = LEGEND_HEIGHT + PANEL_HEIGHT * panels.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    out.push_str(r#"<rect width="100%" height="100%" fill="white"/>"#);
    out.push('\n');
    legend(&mut out, panels.first());
    for (index, panel) in panels.iter().enumerate() {
        draw_panel(&mut out, panel, LEGEND_HEIGHT + PANEL_HEIGHT * index as f64);
    }
    out.push_str("</svg>\n");
    out
}

fn legend(out: &mut String, panel: Option<&Panel>) {
    let _ = writeln!(out, r#"<g class="legend">"#);
    let mut x = LEFT;
    for (index, (label, _)) in panel.into_iter().flat_map(|p| &p.series).enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let _ = writeln!(
            out,
            r#"<line x1="{x}" y1="18" x2="{}" y2="18" stroke="{colour}" stroke-width="2.5"/><text x="{}" y="22">{}</text>"#,
            x + 22.0,
            x + 28.0,
            escape(label)
        );
        x += 40.0 + 7.0 * label.chars().count() as f64;
    }
    out.push_str("</g>\n");
}

fn draw_panel(out: &mut String, panel: &Panel, top: f64) {
    let steps = panel.series.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let highest = panel.series.iter().flat_map(|(_, v)| v).copied().max();
    let tick = nice_step(highest.unwrap_or(0) as f64 / 5.0);
    let y_max = (highest.unwrap_or(0) as f64 / tick).ceil().max(1.0) * tick;
    let frame = Frame {
        x0: LEFT,
        y0: top + TOP,
        width: WIDTH - LEFT - RIGHT,
        height: PANEL_HEIGHT - TOP - BOTTOM,
        steps,
        y_max,
    };
    let _ = writeln!(out, r#"<g class="panel">"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
        frame.x0,
        top + TOP - 12.0,
        escape(&panel.title)
    );
    axes(out, &frame, tick);
    for (index, (label, values)) in panel.series.iter().enumerate() {
        let points: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(step, &value)| {
                let (x, y) = frame.point(step, value);
                format!("{x:.2},{y:.2}")
            })
            .collect();
        let tokens: Vec<String> = values.iter().map(usize::to_string).collect();
        let _ = writeln!(
            out,
            r#"<polyline data-series="{}" data-tokens="{}" points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            escape(label),
            tokens.join(","),
            points.join(" "),
            COLOURS[index % COLOURS.len()]
        );
    }
    out.push_str("</g>\n");
}

/// The axes with their ticks, grid lines and labels.
fn axes(out: &mut String, frame: &Frame, tick: f64) {
    let (left, bottom) = (frame.x0, frame.y0 + frame.height);
    let right = frame.x0 + frame.width;
    let _ = writeln!(
        out,
        r##"<path d="M{left},{} V{bottom} H{right}" fill="none" stroke="#333"/>"##,
        frame.y0
    );
    let mut value = 0.0;
    while value <= frame.y_max + tick / 2.0 {
        let (_, y) = frame.point(0, value as usize);
        let _ = writeln!(
            out,
            r##"<line x1="{left}" y1="{y:.2}" x2="{right}" y2="{y:.2}" stroke="#ddd"/><text x="{}" y="{:.2}" text-anchor="end">{}</text>"##,
            left - 6.0,
            y + 4.0,
            value as usize
        );
        value += tick;
    }
    let x_tick = nice_step(frame.steps as f64 / 10.0).max(1.0) as usize;
    for step in (1..=frame.steps).filter(|step| step % x_tick == 0 || *step == 1) {
        let (x, _) = frame.point(step - 1, 0);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.2}" y1="{bottom}" x2="{x:.2}" y2="{}" stroke="#333"/><text x="{x:.2}" y="{}" text-anchor="middle">{step}</text>"##,
            bottom + 4.0,
            bottom + 17.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">step</text>"#,
        left + frame.width / 2.0,
        bottom + 36.0
    );
    let middle = frame.y0 + frame.height / 2.0;
    let _ = writeln!(
        out,
        r#"<text x="16" y="{middle}" text-anchor="middle" transform="rotate(-90 16 {middle})">context tokens</text>"#
    );
}

/// The smallest of 1, 2, 5 × 10^k at least `raw` (1 for anything below).
fn nice_step(raw: f64) -> f64 {
    if raw <= 1.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * magnitude)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Text safe inside an element or a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_text_is_escaped() {
        assert_eq!(nice_step(0.3), 1.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(1234.0), 2000.0);
        assert_eq!(nice_step(5000.0), 5000.0);
        assert_eq!(escape(r#"a<b & "c"'"#), "a&lt;b &amp; &quot;c&quot;&apos;");
    }

    #[test]
    fn points_map_values_onto_the_frame() {
        let frame = Frame {
            x0: 10.0,
            y0: 20.0,
            width: 100.0,
            height: 50.0,
            steps: 3,
            y_max: 1000.0,
        };
        assert_eq!(frame.point(0, 0), (10.0, 70.0));
        assert_eq!(frame.point(2, 1000), (110.0, 20.0));
        assert_eq!(frame.point(1, 500), (60.0, 45.0));
    }
}
