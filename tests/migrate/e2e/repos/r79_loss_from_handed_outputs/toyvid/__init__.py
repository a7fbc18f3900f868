"""A toy video-translation library in imaginaire's vid2vid shape: the trainer runs its networks
frame by frame and hands their outputs to the methods that compute and scale the losses."""
