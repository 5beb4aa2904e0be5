//! A progress bar on standard error for a long replay.

/// A progress bar on standard error, shown only once a replay has taken more than a second
/// and only when standard error is a terminal.
pub struct ProgressBar {
    bar: indicatif::ProgressBar,
    started: std::time::Instant,
}

impl ProgressBar {
    pub fn new() -> std::sync::Arc<ProgressBar> {
        std::sync::Arc::new(ProgressBar {
            bar: indicatif::ProgressBar::hidden(),
            started: std::time::Instant::now(),
        })
    }

    pub fn update(&self, done: u64, total: u64) {
        if self.bar.is_hidden()
            && self.started.elapsed() > std::time::Duration::from_secs(1)
            && std::io::IsTerminal::is_terminal(&std::io::stderr())
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} replaying {human_pos}/{human_len} records, {eta} left {wide_bar}",
            ) {
                self.bar.set_style(style);
            }
        }
        self.bar.set_length(total.max(done));
        self.bar.set_position(done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
