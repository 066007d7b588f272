/// The `haul` command.
public enum HaulCommand {
    /// Runs the command with the process arguments and exits.
    public static func main() {}
}
