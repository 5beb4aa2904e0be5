//! [`Viewer`]: the replay's frames, named and filtered, handed to a [`View`].

use crate::analysis::ids::HashMap;
use crate::analysis::replay::{
    Aggregate, CloseReason, Frame, ReplayVisitor, SwitchReason, TimeBasis,
};
use crate::input::symbols::{hex_name, Resolve};

use super::clock::*;
use super::filter::*;
use super::frames::*;
use super::trace_info::*;

/// What [`Viewer`] keeps per TID.
#[derive(Default)]
struct ThreadView {
    /// The thread passes `--thread`.
    shown: bool,
    /// [`Frame::function`] (numbered per TID by the replay) → [`ViewFrame::function`].
    functions: Vec<u32>,
    /// Per frame of the replay's stack: [`SHOWN`], [`MATCHES`], [`EXCLUDED`].
    raw: Vec<u8>,
    /// Open frames that match `--function` / `--exclude`.
    matching: u32,
    excluded: u32,
    /// The shown frames (without filters, for a [`View::NODES`] view, only a profile's).
    stack: Vec<ViewFrame>,
    /// How many of `stack` the view has been told about (with filters; without, every frame
    /// as it comes, and the plain paths leave this behind: two stores a call were 1 % of
    /// `hookprof flame`'s instructions).
    told: usize,
}

const SHOWN: u8 = 1;
const MATCHES: u8 = 2;
const EXCLUDED: u8 = 4;
const UNNAMED: u32 = u32::MAX;

/// Filters and names the replayed frames for a [`View`] (see the module's documentation).
pub struct Viewer<'r, V> {
    pub view: V,
    names: Names,
    /// Per function: [`MATCHES`] and [`EXCLUDED`].
    flags: Vec<u8>,
    by_address: HashMap<u64, u32>,
    resolve: &'r mut dyn Resolve,
    filter: Filter,
    /// Threads shown by `--thread`, by TID; empty for all.
    shown_tids: Vec<u64>,
    min_ticks: u64,
    depth: usize,
    /// `--time-range` as timestamps: `[start, end)`.
    time_range: (u64, u64),
    /// No filter at all: every frame is shown, and [`Viewer::enter`] and [`Viewer::exit`]
    /// take a shorter way (a tenth of the flame graph's instructions on a trace of small calls).
    plain: bool,
    threads: Vec<ThreadView>,
    /// TID → index in `threads`.
    tids: TidIndex,
    /// Replayed entries and exits, and whom to tell about them.
    replayed: u64,
    records: u64,
    progress: Option<Progress>,
    /// The names to show, where they are not the symbols' (same-named functions told apart,
    /// [`Prepared::tell_apart`]); the filters still match the symbols' names.
    labels: Option<&'r std::collections::HashMap<u64, String>>,
}

impl<'r, V: View> Viewer<'r, V> {
    pub fn new(view: V, info: &TraceInfo, filter: &Filter, resolve: &'r mut dyn Resolve) -> Self {
        let shown_tids = info
            .threads
            .iter()
            .filter(|t| {
                filter.threads.contains(&t.tid)
                    || t.sequence.is_some_and(|s| filter.threads.contains(&s))
            })
            .map(|t| t.tid)
            .collect();
        Viewer {
            view,
            names: Names::default(),
            flags: Vec::new(),
            by_address: HashMap::default(),
            resolve,
            min_ticks: info.clock.ticks_from_ns(filter.min_duration_ns),
            time_range: filter.time_range_ns.map_or((0, u64::MAX), |(start, end)| {
                let at = |ns: u64| info.clock.base.saturating_add(info.clock.ticks_from_ns(ns));
                (at(start), if end == u64::MAX { u64::MAX } else { at(end) })
            }),
            depth: filter.depth.unwrap_or(usize::MAX),
            plain: filter.functions.is_empty()
                && filter.exclude.is_empty()
                && filter.threads.is_empty()
                && filter.depth.is_none()
                && filter.min_duration_ns == 0
                && filter.time_range_ns.is_none(),
            filter: filter.clone(),
            shown_tids,
            threads: Vec::new(),
            tids: TidIndex::default(),
            replayed: 0,
            records: info.records,
            progress: None,
            labels: None,
        }
    }

    /// Shows the functions of `labels` by those names ([`Viewer::labels`]).
    pub fn with_labels(
        mut self,
        labels: Option<&'r std::collections::HashMap<u64, String>>,
    ) -> Self {
        self.labels = labels;
        self
    }

    /// Reports progress to `progress` while replaying.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The view and the names it refers to.
    pub fn into_parts(self) -> (V, Names) {
        (self.view, self.names)
    }

    /// The index of `tid` in `threads`.
    #[inline(always)]
    fn thread_index(&mut self, tid: u64) -> usize {
        let (index, new) = self.tids.index(tid);
        if new {
            self.add_thread(tid);
        }
        index
    }

    #[cold]
    #[inline(never)]
    fn add_thread(&mut self, tid: u64) {
        let shown = self.filter.threads.is_empty() || self.shown_tids.contains(&tid);
        self.threads.push(ThreadView {
            shown,
            ..ThreadView::default()
        });
    }

    /// The view's number of the function at `address`, named now if new.
    #[cold]
    fn name_function(&mut self, address: u64) -> u32 {
        if let Some(&f) = self.by_address.get(&address) {
            return f;
        }
        let f = self.names.names.len() as u32;
        let name = self
            .resolve
            .resolve(address)
            .unwrap_or_else(|| hex_name(address));
        let mut flags = 0;
        if self.filter.functions.iter().any(|p| p.matches(&name)) {
            flags |= MATCHES;
        }
        if self.filter.exclude.iter().any(|p| p.matches(&name)) {
            flags |= EXCLUDED;
        }
        self.flags.push(flags);
        let name = match self.labels.and_then(|l| l.get(&address)) {
            Some(label) => label.clone(),
            None => name,
        };
        self.names.names.push(name);
        self.names.addresses.push(address);
        self.names
            .entry_points
            .push(self.resolve.entry_point(address));
        self.by_address.insert(address, f);
        f
    }
}

impl<V: View> Viewer<'_, V> {
    /// The view's number of the replay's `frame` on thread `t`.
    #[inline(always)]
    fn function(&mut self, t: usize, frame: &Frame) -> u32 {
        let local = frame.function as usize;
        let function = self.threads[t]
            .functions
            .get(local)
            .copied()
            .unwrap_or(UNNAMED);
        if function != UNNAMED {
            return function;
        }
        let function = self.name_function(frame.address);
        let functions = &mut self.threads[t].functions;
        if functions.len() <= local {
            functions.resize(local + 1, UNNAMED);
        }
        functions[local] = function;
        function
    }

    /// [`ReplayVisitor::enter`] without filters: every frame is shown at once.
    #[inline(always)]
    fn enter_plain(&mut self, tid: u64, frame: &Frame) {
        let t = self.thread_index(tid);
        let function = self.function(t, frame);
        let thread = &mut self.threads[t];
        thread.stack.push(ViewFrame::new(frame, function));
        self.view.enter(tid, &mut thread.stack, &self.names);
    }

    /// [`ReplayVisitor::enter`] without filters, for a [`View::NODES`] view: the view's
    /// number of the frame goes to the replay's frame.
    #[inline(always)]
    fn enter_node(&mut self, tid: u64, stack: &mut [Frame]) {
        let depth = stack.len();
        let Some((frame, below)) = stack.split_last_mut() else {
            return;
        };
        let parent = below.last().map(|f| f.user);
        if let Some(node) = parent.and_then(|p| self.view.known_node(p, depth, frame.address)) {
            frame.user = node;
            return;
        }
        self.enter_new_node(tid, parent, depth, frame);
    }

    /// [`Self::enter_node`] where the view needs the function's number.
    #[inline(never)]
    fn enter_new_node(&mut self, tid: u64, parent: Option<u32>, depth: usize, frame: &mut Frame) {
        let t = self.thread_index(tid);
        let function = self.function(t, frame);
        frame.user = self
            .view
            .enter_node(tid, parent, depth, function, frame.address);
    }

    /// [`ReplayVisitor::exit`] without filters, for a [`View::NODES`] view: the frame's
    /// times are the replay's (its children's time, summed there, is what the view's stack
    /// would have summed: without filters every child is shown).
    #[inline(always)]
    fn exit_node(&mut self, tid: u64, time: u64, stack: &[Frame]) {
        let Some(frame) = stack.last() else { return };
        let exclusive = time
            .saturating_sub(frame.entry_time)
            .saturating_sub(frame.child_ticks);
        self.view.exit_node(tid, frame.user, exclusive);
    }

    /// A hidden path's time, given to the shown frames above it (`frames`, if any) as their
    /// exclusive time.
    fn give_to_caller(&mut self, tid: u64, frames: &[ViewFrame], calls: &Aggregate) {
        if !frames.is_empty() && calls.ticks != 0 {
            let hidden = Aggregate {
                exclusive: calls.ticks,
                ..Aggregate::default()
            };
            self.view.aggregate(tid, frames, &hidden, &self.names);
        }
    }

    /// [`ReplayVisitor::aggregate`] without filters. The replay hands every node of a tree
    /// over in depth-first order, so the path of a node's parent is a prefix of the path just
    /// seen: the thread's stack is cut to it and the node's frame pushed, and the view hears of
    /// that frame alone ([`View::enter`]), as it would in a trace (constant work per node, where
    /// building every path from its root would cost its depth: a recursion 100 000 deep).
    fn aggregate_plain(&mut self, t: usize, tid: u64, stack: &[Frame], calls: &Aggregate) {
        let Some(frame) = stack.last() else { return };
        let function = self.function(t, frame);
        let thread = &mut self.threads[t];
        thread.stack.truncate(stack.len() - 1);
        if thread.stack.len() + 1 < stack.len() {
            // Not depth-first after all (cannot be from the replay): the path from its root.
            thread.stack.clear();
            for f in &stack[..stack.len() - 1] {
                let function = self.function(t, f);
                let thread = &mut self.threads[t];
                thread.stack.push(ViewFrame::new(f, function));
                self.view.enter(tid, &mut thread.stack, &self.names);
            }
        }
        let thread = &mut self.threads[t];
        thread.stack.push(ViewFrame::new(frame, function));
        thread.told = thread.stack.len();
        self.view.enter(tid, &mut thread.stack, &self.names);
        if calls.calls != 0 {
            self.view.aggregate(tid, &thread.stack, calls, &self.names);
        }
    }

    /// [`ReplayVisitor::exit`] without filters.
    #[inline(always)]
    fn exit_plain(&mut self, tid: u64, time: u64) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        let Some(frame) = thread.stack.last() else {
            return;
        };
        let duration = time.saturating_sub(frame.entry_time);
        self.view.exit(tid, time, &thread.stack, &self.names);
        thread.stack.pop();
        if let Some(parent) = thread.stack.last_mut() {
            parent.child_ticks = parent.child_ticks.saturating_add(duration);
        }
    }
}

impl<V: View> ReplayVisitor for Viewer<'_, V> {
    const AGGREGATES: bool = !V::IN_TIME_ORDER;

    fn time_basis(&self) -> TimeBasis {
        self.filter.time
    }

    /// Tells the progress every 65536 records (counted a batch at a time: once a record
    /// in the replay's loop was 3 % of `hookprof flame`'s instructions).
    fn replayed(&mut self, records: u64) {
        let before = self.replayed;
        self.replayed += records;
        if before >> 16 != self.replayed >> 16 {
            if let Some(progress) = &self.progress {
                (progress.0)(self.replayed & !0xffff, self.records);
            }
        }
    }

    /// To the innermost shown frame open (none: nothing to show). Under `--min-duration` an
    /// interval shorter than the duration is left out, as a short call is; the shown frames
    /// around a longer one (as long, since they hold it) are told to the view first.
    fn switched_out(
        &mut self,
        tid: u64,
        from: u64,
        to: u64,
        reason: SwitchReason,
        _stack: &[Frame],
    ) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        if !thread.shown || thread.stack.is_empty() || to.saturating_sub(from) < self.min_ticks {
            return;
        }
        if self.plain {
            // Every frame was told at once (not kept up by the plain paths).
            thread.told = thread.stack.len();
        }
        while thread.told < thread.stack.len() {
            thread.told += 1;
            self.view
                .enter(tid, &mut thread.stack[..thread.told], &self.names);
        }
        self.view
            .switched_out(tid, from, to, reason, &thread.stack, &self.names);
    }

    fn aggregate(&mut self, tid: u64, stack: &[Frame], calls: &Aggregate) {
        let t = self.thread_index(tid);
        if self.plain {
            return self.aggregate_plain(t, tid, stack, calls);
        }
        if !self.threads[t].shown {
            return;
        }
        // The frames a trace would show for this path (the filters' rules of `enter`): from
        // the outermost one --function matches, none below an --exclude'd one, at most --depth.
        // A path hidden at its last frame leaves its time to the shown frame above it, as a
        // hidden call does in a trace.
        let only_functions = !self.filter.functions.is_empty();
        let mut frames: Vec<ViewFrame> = Vec::with_capacity(stack.len());
        let mut showing = !only_functions;
        for (i, frame) in stack.iter().enumerate() {
            let function = self.function(t, frame);
            let flags = self.flags[function as usize];
            let last = i + 1 == stack.len();
            showing |= flags & MATCHES != 0;
            if flags & EXCLUDED != 0 || (showing && frames.len() >= self.depth) {
                if last {
                    self.give_to_caller(tid, &frames, calls);
                }
                return;
            }
            if showing {
                let mut view_frame = ViewFrame::new(frame, function);
                view_frame.user = u32::MAX; // not through View::enter
                frames.push(view_frame);
            }
        }
        if frames.is_empty() || calls.calls == 0 {
            return;
        }
        if calls.ticks / calls.calls < self.min_ticks {
            frames.pop();
            return self.give_to_caller(tid, &frames, calls);
        }
        self.view.aggregate(tid, &frames, calls, &self.names);
    }

    /// Without filters, inlined into the replay's loop (the call's saving and restoring of
    /// registers was a fifth of the view layer's instructions).
    #[inline(always)]
    fn enter(&mut self, tid: u64, stack: &mut [Frame]) {
        if self.plain && V::NODES {
            return self.enter_node(tid, stack);
        }
        let Some(frame) = stack.last() else { return };
        if self.plain {
            return self.enter_plain(tid, frame);
        }
        self.enter_filtered(tid, frame);
    }

    fn lost(&mut self, tid: u64, time: u64, count: u64) {
        // Another thread's side of a loss (no records of its own dropped) is only a gap.
        if count == 0 || time < self.time_range.0 || time >= self.time_range.1 {
            return;
        }
        if !self.plain {
            let t = self.thread_index(tid);
            if !self.threads[t].shown {
                return;
            }
        }
        self.view.lost(tid, time, count, &self.names);
    }

    /// Inlined as [`Self::enter`] is.
    #[inline(always)]
    fn exit(&mut self, tid: u64, time: u64, _reason: CloseReason, stack: &[Frame]) {
        if self.plain {
            if V::NODES {
                return self.exit_node(tid, time, stack);
            }
            return self.exit_plain(tid, time);
        }
        self.exit_filtered(tid, time);
    }
}

impl<V: View> Viewer<'_, V> {
    /// [`ReplayVisitor::enter`] with filters.
    #[inline(never)]
    fn enter_filtered(&mut self, tid: u64, frame: &Frame) {
        let t = self.thread_index(tid);
        if !self.threads[t].shown {
            return;
        }
        let function = self.function(t, frame);
        let flags = self.flags[function as usize];
        let only_functions = !self.filter.functions.is_empty();
        let thread = &mut self.threads[t];
        let mut bits = flags;
        if flags & MATCHES != 0 {
            thread.matching += 1;
        }
        if flags & EXCLUDED != 0 {
            thread.excluded += 1;
        }
        let shown = thread.excluded == 0
            && (!only_functions || thread.matching > 0)
            && thread.stack.len() < self.depth
            && frame.entry_time >= self.time_range.0
            && frame.entry_time < self.time_range.1;
        if shown {
            bits |= SHOWN;
            thread.stack.push(ViewFrame::new(frame, function));
            if self.min_ticks == 0 {
                thread.told = thread.stack.len();
                self.view.enter(tid, &mut thread.stack, &self.names);
            }
        }
        thread.raw.push(bits);
    }

    /// [`ReplayVisitor::exit`] with filters.
    #[inline(never)]
    fn exit_filtered(&mut self, tid: u64, time: u64) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        if !thread.shown {
            return;
        }
        let Some(bits) = thread.raw.pop() else { return };
        if bits & MATCHES != 0 {
            thread.matching -= 1;
        }
        if bits & EXCLUDED != 0 {
            thread.excluded -= 1;
        }
        if bits & SHOWN == 0 {
            return;
        }
        let Some(frame) = thread.stack.last() else {
            return;
        };
        let duration = time.saturating_sub(frame.entry_time);
        if duration >= self.min_ticks {
            while thread.told < thread.stack.len() {
                thread.told += 1;
                self.view
                    .enter(tid, &mut thread.stack[..thread.told], &self.names);
            }
            self.view.exit(tid, time, &thread.stack, &self.names);
            thread.stack.pop();
            if let Some(parent) = thread.stack.last_mut() {
                parent.child_ticks = parent.child_ticks.saturating_add(duration);
            }
        } else {
            thread.stack.pop();
        }
        thread.told = thread.told.min(thread.stack.len());
    }
}
