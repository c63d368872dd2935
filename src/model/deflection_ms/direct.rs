//! Direct solution of the balance equations of Q̂ by block Gaussian elimination over
//! levels (linear level reduction).
//!
//! Every transition changes the number of customers in the node, X_a + … + X_cd, by at
//! most one (an arrival +1, a departure −1, a preemption 0), so in the order of that
//! number the generator is block tridiagonal, with 4m + 1 levels and a single state at
//! each end. Eliminating from the top level down gives π_k = π_{k−1} R_{k−1} with
//! R_{k−1} = U_{k−1} S_k⁻¹, S_K = −A_K, S_k = −(A_k + R_k D_{k+1}) (U: up, A: within,
//! D: down blocks); the empty state's probability is set to 1 and everything is
//! normalised at the end. The S_k are non-singular M-matrices (what remains of −Q once
//! the levels above are censored), for which LU factorisation without pivoting is
//! stable; their diagonals are formed by subtraction (the GTH variant would avoid it),
//! which costs nothing measurable here: the balance residuals are about 1e-15.
//!
//! The blocks are dense: the cost is about Σ_k (⅔ s_k³ + 2 s_k² s_{k−1}) flops for levels
//! of s_k states (m = 2: 7·10⁶; m = 3: 1·10⁹; m = 4: 6·10¹⁰), and the memory Σ s_k
//! s_{k+1} doubles (m = 4: about 110 MB; measured: 1 ms, 0.17 s and 12 s a solve, 126 MB
//! peak at m = 4). Hence [`crate::model::deflection_ms::DIRECT_MAX_M`].

use crate::model::deflection_ms::chain::{for_each_transition, outflow, Rates, StateSpace};

/// A dense row-major matrix.
struct Dense {
    rows: usize,
    cols: usize,
    v: Vec<f64>,
}

impl Dense {
    fn zeros(rows: usize, cols: usize) -> Self {
        Dense {
            rows,
            cols,
            v: vec![0.0; rows * cols],
        }
    }

    #[inline]
    fn row(&self, i: usize) -> &[f64] {
        &self.v[i * self.cols..(i + 1) * self.cols]
    }

    #[inline]
    fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.v[i * self.cols..(i + 1) * self.cols]
    }

    /// In-place LU factorisation without pivoting (unit lower triangle below the
    /// diagonal, upper triangle on and above).
    fn lu(&mut self) {
        let n = self.rows;
        for p in 0..n {
            let (top, rest) = self.v.split_at_mut((p + 1) * n);
            let pivot_row = &top[p * n..];
            let piv = pivot_row[p];
            for i in 0..n - p - 1 {
                let row = &mut rest[i * n..(i + 1) * n];
                let l = row[p] / piv;
                row[p] = l;
                if l != 0.0 {
                    for (a, &b) in row[p + 1..].iter_mut().zip(&pivot_row[p + 1..]) {
                        *a -= l * b;
                    }
                }
            }
        }
    }

    /// Solves (self as factored by [`Dense::lu`]) · X = `rhs` in place, for a matrix of
    /// right-hand sides.
    fn lu_solve(&self, rhs: &mut Dense) {
        let n = self.rows;
        let w = rhs.cols;
        // Forward: unit lower triangle.
        for i in 0..n {
            let (done, cur) = rhs.v.split_at_mut(i * w);
            let cur = &mut cur[..w];
            for (j, &l) in self.row(i)[..i].iter().enumerate() {
                if l != 0.0 {
                    for (a, &b) in cur.iter_mut().zip(&done[j * w..(j + 1) * w]) {
                        *a -= l * b;
                    }
                }
            }
        }
        // Backward: upper triangle.
        for i in (0..n).rev() {
            let (cur, done) = rhs.v.split_at_mut((i + 1) * w);
            let cur = &mut cur[i * w..];
            let row = self.row(i);
            for j in i + 1..n {
                let u = row[j];
                if u != 0.0 {
                    let src = &done[(j - i - 1) * w..(j - i) * w];
                    for (a, &b) in cur.iter_mut().zip(src) {
                        *a -= u * b;
                    }
                }
            }
            let d = 1.0 / row[i];
            for a in cur.iter_mut() {
                *a *= d;
            }
        }
    }
}

/// The stationary distribution of Q̂ (rank order of `space`), by level reduction.
pub fn solve_direct(space: &StateSpace, r: &Rates) -> Vec<f64> {
    let m = space.m();
    let states = space.states();
    let top = 4 * m as usize;
    let level_of = |j: usize| states[j].iter().map(|&v| v as usize).sum::<usize>();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); top + 1];
    let mut local = vec![0usize; states.len()];
    for (j, slot) in local.iter_mut().enumerate() {
        let k = level_of(j);
        *slot = members[k].len();
        members[k].push(j);
    }
    // Sparse up and down blocks: for each state, its transitions one level up / down
    // as (local index there, rate).
    let mut up: Vec<Vec<(usize, f64)>> = vec![Vec::new(); states.len()];
    let mut down: Vec<Vec<(usize, f64)>> = vec![Vec::new(); states.len()];
    for (j, x) in states.iter().enumerate() {
        let k = level_of(j);
        for_each_transition(x, m, r, |y, rate| {
            let t = space.rank(&y);
            let ky = level_of(t);
            if ky == k + 1 {
                up[j].push((local[t], rate));
            } else if ky + 1 == k {
                down[j].push((local[t], rate));
            }
        });
    }
    // rt[k] = R_kᵀ (s_{k+1} × s_k), for k = 0 … top − 1.
    let mut rt: Vec<Dense> = Vec::with_capacity(top);
    for k in (1..=top).rev() {
        let s = members[k].len();
        // T = S_kᵀ.
        let mut t = Dense::zeros(s, s);
        for (li, &j) in members[k].iter().enumerate() {
            let x = &states[j];
            t.row_mut(li)[li] += outflow(x, m, r);
            for_each_transition(x, m, r, |y, rate| {
                let ty = space.rank(&y);
                if level_of(ty) == k {
                    t.row_mut(local[ty])[li] -= rate;
                }
            });
        }
        // The last block pushed is R_kᵀ (none above the top level).
        if let Some(rk) = rt.last() {
            // Minus (R_k D_{k+1})ᵀ: row j of it is Σ_l D_{k+1}[l][j] R_kᵀ[l].
            for (ll, &l) in members[k + 1].iter().enumerate() {
                let src = rk.row(ll);
                for &(lj, rate) in &down[l] {
                    for (a, &b) in t.row_mut(lj).iter_mut().zip(src) {
                        *a -= rate * b;
                    }
                }
            }
        }
        t.lu();
        // R_{k−1}ᵀ = T⁻¹ U_{k−1}ᵀ.
        let sl = members[k - 1].len();
        let mut x = Dense::zeros(s, sl);
        for (li, &j) in members[k - 1].iter().enumerate() {
            for &(lt, rate) in &up[j] {
                x.row_mut(lt)[li] += rate;
            }
        }
        t.lu_solve(&mut x);
        rt.push(x);
    }
    // rt was filled from the top: rt[i] = R_{top−1−i}ᵀ.
    rt.reverse();
    let mut pi = vec![0.0; states.len()];
    let mut prev = vec![1.0];
    pi[members[0][0]] = 1.0;
    for k in 1..=top {
        let r_t = &rt[k - 1];
        let cur: Vec<f64> = (0..r_t.rows)
            .map(|l| r_t.row(l).iter().zip(&prev).map(|(a, b)| a * b).sum())
            .collect();
        for (l, &j) in members[k].iter().enumerate() {
            pi[j] = cur[l];
        }
        prev = cur;
    }
    let sum: f64 = pi.iter().sum();
    for v in pi.iter_mut() {
        *v /= sum;
    }
    pi
}
