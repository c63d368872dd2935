//! Coordinate arithmetic of k-ary n-dimensional grids, shared by the torus and the mesh.
//! Node numbers are mixed-radix: node = Σ c_i · k^i (dimension 0 varies fastest).

/// A k-ary n-dimensional coordinate system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Nodes per dimension.
    pub k: u32,
    /// Number of dimensions.
    pub n: u32,
}

impl Grid {
    /// Number of nodes, k^n.
    pub fn nodes(&self) -> usize {
        (self.k as usize).pow(self.n)
    }

    /// k^dim: the node-number stride of dimension `dim`.
    #[inline]
    pub fn stride(&self, dim: u32) -> u32 {
        self.k.pow(dim)
    }

    /// Coordinate of `node` in dimension `dim`.
    #[inline]
    pub fn coord(&self, node: u32, dim: u32) -> u32 {
        (node / self.stride(dim)) % self.k
    }

    /// `node` with its coordinate in dimension `dim` replaced by `c`.
    #[inline]
    pub fn with_coord(&self, node: u32, dim: u32, c: u32) -> u32 {
        let s = self.stride(dim);
        node - self.coord(node, dim) * s + c * s
    }
}
