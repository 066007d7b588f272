public enum HaulTestSupportPlaceholder {}
