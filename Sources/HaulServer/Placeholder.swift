public enum HaulServerPlaceholder {}
