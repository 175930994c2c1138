//! JSON-RPC batches (2025-03-26 only): the answers to one batch leave as one array

/// One batch being answered
#[derive(Debug)]
struct Batch {
    id: u32,
    /// The answers so far, comma-separated, without the brackets
    answers: Vec<u8>,
    /// Requests of the batch that the application still has to answer
    pending: usize,
    /// Still reading the batch's entries
    open: bool,
}

/// Batches with unanswered requests
#[derive(Debug, Default)]
pub(crate) struct Batches {
    next: u32,
    live: Vec<Batch>,
}

impl Batches {
    pub(crate) fn open(&mut self) -> u32 {
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        self.live.push(Batch {
            id,
            answers: Vec::new(),
            pending: 0,
            open: true,
        });
        id
    }

    fn get(&mut self, id: u32) -> Option<&mut Batch> {
        self.live.iter_mut().find(|b| b.id == id)
    }

    /// All entries were read
    pub(crate) fn close(&mut self, id: u32) {
        if let Some(b) = self.get(id) {
            b.open = false;
        }
    }

    pub(crate) fn add_pending(&mut self, id: u32) {
        if let Some(b) = self.get(id) {
            b.pending += 1;
        }
    }

    pub(crate) fn remove_pending(&mut self, id: u32) {
        if let Some(b) = self.get(id) {
            b.pending = b.pending.saturating_sub(1);
        }
    }

    /// The buffer to write the next answer of batch `id` into (a separator is already added)
    pub(crate) fn next_entry(&mut self, id: u32) -> &mut Vec<u8> {
        let index = self
            .live
            .iter()
            .position(|b| b.id == id)
            .expect("answers go to live batches only");
        let answers = &mut self.live[index].answers;
        if !answers.is_empty() {
            answers.push(b',');
        }
        answers
    }

    /// The batch's answers, once every entry was read and every request answered
    pub(crate) fn take_if_done(&mut self, id: u32) -> Option<Vec<u8>> {
        let index = self.live.iter().position(|b| b.id == id)?;
        let b = &self.live[index];
        if b.open || b.pending > 0 {
            return None;
        }
        Some(self.live.swap_remove(index).answers)
    }

    pub(crate) fn clear(&mut self) {
        self.live.clear();
    }
}
