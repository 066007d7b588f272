import HaulCLI
HaulCommand.main()
